"""Status summary of an nginx access log: python analyze.py logs/access.log"""
import json
import re
import sys
from collections import Counter

LINE = re.compile(r'^(\S+) - - \[([^\]]+)\] "(\S+) (\S+) HTTP/[\d.]+" (\d{3}) (\d+) "[^"]*" "[^"]*" rt=([\d.]+) rid=(\w+)$')
statuses = []
with open(sys.argv[1]) as f:
    for line in f:
        m = LINE.match(line.rstrip("\n"))
        if m:
            statuses.append(int(m.group(5)))
classes = Counter(f"{s // 100}xx" for s in statuses)
errors = sum(1 for s in statuses if s >= 500)
print(json.dumps({"total_requests": len(statuses), "status_classes": dict(sorted(classes.items())),
                  "server_errors": errors, "error_rate": round(errors / len(statuses), 4)}))
