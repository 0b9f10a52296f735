"""The root cause of an incident: python analyze.py logs/access.log logs/app.log

The root cause is the component whose WARN/ERROR lines start first among the components named by
the errors behind failed requests (their rid appears in the access log with a 5xx status)."""
import json
import re
import sys

access, app = sys.argv[1], sys.argv[2]
failed = set()
with open(access) as f:
    for line in f:
        m = re.search(r'" (\d{3}) \d+ ".*rid=(\w+)$', line.rstrip("\n"))
        if m and int(m.group(1)) >= 500:
            failed.add(m.group(2))
APP = re.compile(r'^(\S+) level=(\w+) service=(\S+) component=(\S+) rid=(\S+) msg="(.*)"$')
entries = []
with open(app) as f:
    for line in f:
        m = APP.match(line.rstrip("\n"))
        if m:
            entries.append(m.groups())
culprits = {comp for ts, level, svc, comp, rid, msg in entries if rid in failed}
first = min((e for e in entries if e[3] in culprits and e[1] in ("WARN", "ERROR")), key=lambda e: e[0])
cause = first[3]
services = sorted({svc for ts, level, svc, comp, rid, msg in entries if comp == cause and level == "ERROR" and svc != "infra"})
print(json.dumps({"root_cause": cause, "incident_start": first[0][:19] + "Z", "affected_services": services}))
