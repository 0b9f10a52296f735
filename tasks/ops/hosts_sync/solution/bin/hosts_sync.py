"""Keep the block between "# BEGIN managed hosts" and "# END managed hosts" of $ROOT/etc/hosts equal to
inventory.json ("ip name [aliases]" lines sorted by name); everything outside it stays; a missing block is
appended."""
import json
import os
import sys

root = sys.argv[1]
hosts = os.path.join(root, "etc", "hosts")
with open(os.path.join(root, "etc", "inventory.json")) as f:
    inventory = json.load(f)
block = ["# BEGIN managed hosts"]
block += [" ".join([h["ip"], h["name"], *h.get("aliases", [])]) for h in sorted(inventory, key=lambda h: h["name"])]
block.append("# END managed hosts")
with open(hosts) as f:
    lines = f.read().splitlines()
if "# BEGIN managed hosts" in lines and "# END managed hosts" in lines:
    start, end = lines.index("# BEGIN managed hosts"), lines.index("# END managed hosts")
    lines[start:end + 1] = block
else:
    lines += block
with open(hosts, "w") as f:
    f.write("\n".join(lines) + "\n")
