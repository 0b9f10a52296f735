"""Repair the units in $ROOT/etc/systemd/system/*.service: an ExecStart= binary that does not exist is
replaced by the one of the same name under /opt/<unit>/bin or /usr/local/bin (paths inside $ROOT);
a key repeated in a section keeps only its last value; [Service] gets Restart=on-failure if it has no
Restart=."""
import os
import sys

root = sys.argv[1]
units = os.path.join(root, "etc", "systemd", "system")
for name in sorted(os.listdir(units)):
    if not name.endswith(".service"):
        continue
    unit = name[: -len(".service")]
    path = os.path.join(units, name)
    with open(path) as f:
        lines = f.read().splitlines()
    sections, order = {}, []
    current = None
    for line in lines:
        if line.startswith("[") and line.endswith("]"):
            current = line
            order.append(line)
            sections[line] = {}
        elif "=" in line and current:
            key, value = line.split("=", 1)
            sections[current].pop(key, None)
            sections[current][key] = value
    service = sections.setdefault("[Service]", {})
    if "[Service]" not in order:
        order.append("[Service]")
    exec_start = service.get("ExecStart", "")
    binary, _, args = exec_start.partition(" ")
    if binary and not os.path.exists(root + binary):
        base = os.path.basename(binary)
        for candidate in (f"/opt/{unit}/bin/{base}", f"/usr/local/bin/{base}"):
            if os.path.exists(root + candidate):
                service["ExecStart"] = candidate + (" " + args if args else "")
                break
    service.setdefault("Restart", "on-failure")
    out = []
    for section in order:
        out.append(section)
        out += [f"{k}={v}" for k, v in sections[section].items()]
        out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
