"""Point every `proxy_pass http://127.0.0.1:PORT` of $ROOT/etc/nginx/conf.d/<service>.conf at the port
its service listens on ($ROOT/etc/ports.txt, "service port" lines); files of unknown services stay."""
import os
import re
import sys

root = sys.argv[1]
ports = {}
with open(os.path.join(root, "etc", "ports.txt")) as f:
    for line in f:
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#"):
            ports[parts[0]] = parts[1]
conf = os.path.join(root, "etc", "nginx", "conf.d")
for name in sorted(os.listdir(conf)):
    service = name[:-5] if name.endswith(".conf") else None
    if service not in ports:
        continue
    path = os.path.join(conf, name)
    with open(path) as f:
        text = f.read()
    fixed = re.sub(r"(proxy_pass\s+http://127\.0\.0\.1:)\d+", lambda m: m.group(1) + ports[service], text)
    if fixed != text:
        with open(path, "w") as f:
            f.write(fixed)
