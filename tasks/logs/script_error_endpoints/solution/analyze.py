"""Which endpoints and clients get 5xx responses: python analyze.py logs/access.log"""
import json
import re
import sys
from collections import Counter

LINE = re.compile(r'^(\S+) - - \[([^\]]+)\] "(\S+) (\S+) HTTP/[\d.]+" (\d{3}) (\d+) "[^"]*" "[^"]*" rt=([\d.]+) rid=(\w+)$')


def endpoint(method, path):
    path = path.split("?", 1)[0]
    return method + " " + re.sub(r"(?<=[/.])(?:\d+|[0-9a-f]{8,})(?=[/.]|$)", "{id}", path)


by_endpoint, by_client = Counter(), Counter()
with open(sys.argv[1]) as f:
    for line in f:
        m = LINE.match(line.rstrip("\n"))
        if m and int(m.group(5)) >= 500:
            by_endpoint[endpoint(m.group(3), m.group(4))] += 1
            by_client[m.group(1)] += 1
ranked = sorted(by_endpoint.items(), key=lambda kv: (-kv[1], kv[0]))
print(json.dumps({"errors_by_endpoint": dict(sorted(by_endpoint.items())), "top_error_endpoint": ranked[0][0],
                  "top_error_clients": [ip for ip, _ in sorted(by_client.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]}))
