"""Password-guessing sources in an sshd log: python analyze.py logs/auth.log"""
import json
import re
import sys
from collections import Counter

failures = Counter()
accepted = []
with open(sys.argv[1]) as f:
    for line in f:
        m = re.search(r"Failed password for (?:invalid user )?\S+ from (\S+) port", line)
        if m:
            failures[m.group(1)] += 1
            continue
        m = re.search(r"Accepted password for (\S+) from (\S+) port", line)
        if m:
            accepted.append((m.group(1), m.group(2)))
attackers = [ip for ip, n in sorted(failures.items(), key=lambda kv: (-kv[1], kv[0])) if n >= 10]
hit = next(((user, ip) for user, ip in accepted if ip in attackers), (None, None))
print(json.dumps({"attackers": attackers, "compromised_user": hit[0], "compromise_source": hit[1]}))
