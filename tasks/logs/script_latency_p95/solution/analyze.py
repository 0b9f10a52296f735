"""p95 latency per endpoint (nearest rank, requests with status < 500, endpoints with >= 20 of them)."""
import json
import re
import sys

LINE = re.compile(r'^(\S+) - - \[([^\]]+)\] "(\S+) (\S+) HTTP/[\d.]+" (\d{3}) (\d+) "[^"]*" "[^"]*" rt=([\d.]+) rid=(\w+)$')
latency = {}
with open(sys.argv[1]) as f:
    for line in f:
        m = LINE.match(line.rstrip("\n"))
        if not m or int(m.group(5)) >= 500:
            continue
        path = re.sub(r"(?<=[/.])(?:\d+|[0-9a-f]{8,})(?=[/.]|$)", "{id}", m.group(4).split("?", 1)[0])
        latency.setdefault(f"{m.group(3)} {path}", []).append(round(float(m.group(7)) * 1000))
p95 = {}
for endpoint, values in sorted(latency.items()):
    if len(values) >= 20:
        values.sort()
        p95[endpoint] = values[-(-95 * len(values) // 100) - 1]
print(json.dumps({"p95_ms": p95, "slowest_endpoint": min(p95, key=lambda e: (-p95[e], e))}))
