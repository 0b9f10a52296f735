"""Delete regular files below $ROOT/var/tmp not modified for 7 days (86400 * 7 s before $NOW, an epoch
time), except below folders named in $ROOT/etc/tmp-keep.txt; then remove folders left empty (never the
top folder)."""
import os
import sys

root = sys.argv[1]
top = os.path.join(root, "var", "tmp")
now = int(os.environ["NOW"])
with open(os.path.join(root, "etc", "tmp-keep.txt")) as f:
    keep = [os.path.join(top, line.strip()) for line in f if line.strip()]
for dirpath, dirnames, names in os.walk(top, topdown=False):
    if any(dirpath == k or dirpath.startswith(k + "/") for k in keep):
        continue
    for name in names:
        path = os.path.join(dirpath, name)
        if os.path.isfile(path) and not os.path.islink(path) and os.lstat(path).st_mtime < now - 7 * 86400:
            os.remove(path)
    if dirpath != top and not os.listdir(dirpath):
        os.rmdir(dirpath)
