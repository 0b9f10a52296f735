"""Create the accounts listed in $ROOT/etc/provision/users.csv that do not exist yet."""
import csv
import os
import sys

root = sys.argv[1]
etc = os.path.join(root, "etc")


def read_lines(name):
    with open(os.path.join(etc, name)) as f:
        return f.read().splitlines()


passwd, group = read_lines("passwd"), read_lines("group")
users = {line.split(":")[0] for line in passwd}
with open(os.path.join(etc, "provision", "users.csv")) as f:
    rows = list(csv.DictReader(f))
groups = {line.split(":")[0]: line.split(":") for line in group}
for row in rows:
    name = row["name"]
    if name not in users:
        passwd.append(f"{name}:x:{row['uid']}:{row['uid']}:{row['comment']}:/home/{name}:{row['shell']}")
        group.append(f"{name}:x:{row['uid']}:")
        groups[name] = [name, "x", row["uid"], ""]
        users.add(name)
    for extra in filter(None, row["groups"].split(";")):
        fields = groups[extra]
        members = list(filter(None, fields[3].split(",")))
        if name not in members:
            fields[3] = ",".join(members + [name])
    home = os.path.join(root, "home", name)
    os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
    os.chmod(home, 0o750)
    os.chmod(os.path.join(home, ".ssh"), 0o700)
    keys = os.path.join(home, ".ssh", "authorized_keys")
    with open(keys, "w") as f:
        f.write(row["key"] + "\n")
    os.chmod(keys, 0o600)
group = [":".join(groups[line.split(":")[0]]) for line in group]
for name, lines, mode in (("passwd", passwd, 0o644), ("group", group, 0o644)):
    with open(os.path.join(etc, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(os.path.join(etc, name), mode)
