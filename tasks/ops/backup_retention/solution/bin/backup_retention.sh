#!/bin/bash
# Back up $ROOT/srv/data to $ROOT/var/backups/data-$TODAY.tar.gz (once a day) and keep the 7 newest.
set -euo pipefail
root="$1"
dest="$root/var/backups"
mkdir -p "$dest"
target="$dest/data-$TODAY.tar.gz"
if [ ! -e "$target" ]; then
  tar -czf "$target.tmp" -C "$root/srv/data" .
  mv "$target.tmp" "$target"
  chmod 0600 "$target"
fi
ls "$dest" | grep -E '^data-[0-9]{4}-[0-9]{2}-[0-9]{2}\.tar\.gz$' | sort -r | tail -n +8 | while read -r old; do
  rm -f "$dest/$old"
done
