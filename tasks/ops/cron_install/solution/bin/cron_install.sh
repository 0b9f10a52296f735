#!/bin/bash
# Install $ROOT/etc/jobs/<name>.job (line 1: schedule and user, line 2: command) as $ROOT/etc/cron.d/<name>
# marked "# managed by cron_install"; remove managed files whose job is gone; leave other files alone.
set -euo pipefail
root="$1"
crond="$root/etc/cron.d"
mkdir -p "$crond"
shopt -s nullglob
for job in "$root"/etc/jobs/*.job; do
  name=$(basename "$job" .job)
  { echo "# managed by cron_install"; echo "$(sed -n 1p "$job") $(sed -n 2p "$job")"; } > "$crond/$name.tmp"
  mv "$crond/$name.tmp" "$crond/$name"
  chmod 0644 "$crond/$name"
done
for file in "$crond"/*; do
  name=$(basename "$file")
  if head -n1 "$file" | grep -qx '# managed by cron_install' && [ ! -e "$root/etc/jobs/$name.job" ]; then
    rm "$file"
  fi
done
