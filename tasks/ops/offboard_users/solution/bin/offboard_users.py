"""Remove the accounts in $ROOT/etc/offboard.txt: passwd, shadow and group entries, home archived."""
import os
import shutil
import sys

root = sys.argv[1]
etc = os.path.join(root, "etc")
with open(os.path.join(etc, "offboard.txt")) as f:
    leaving = {line.strip() for line in f if line.strip() and not line.startswith("#")}
for name in ("passwd", "shadow", "group"):
    path = os.path.join(etc, name)
    mode = os.stat(path).st_mode & 0o7777
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        fields = line.split(":")
        if name != "group" and fields[0] in leaving:
            continue
        if name == "group":
            if fields[0] in leaving:
                continue
            fields[3] = ",".join(m for m in fields[3].split(",") if m and m not in leaving)
            line = ":".join(fields)
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    os.chmod(path, mode)
archive = os.path.join(root, "home", ".archive")
for user in sorted(leaving):
    home = os.path.join(root, "home", user)
    if os.path.isdir(home):
        os.makedirs(archive, exist_ok=True)
        os.chmod(archive, 0o700)
        shutil.move(home, os.path.join(archive, user))
