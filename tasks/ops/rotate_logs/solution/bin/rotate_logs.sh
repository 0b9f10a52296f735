#!/bin/bash
# Rotate every non-empty *.log in $ROOT/var/log/app: name.log -> name.log.1, name.log.1 -> name.log.2.gz,
# name.log.N.gz -> name.log.N+1.gz; keep $KEEP rotations (default 4); the log is emptied, its mode kept.
set -euo pipefail
dir="$1/var/log/app"
keep="${KEEP:-4}"
shopt -s nullglob
for log in "$dir"/*.log; do
  [ -s "$log" ] || continue
  for ((n = keep; n >= 1; n--)); do
    if [ "$n" -eq "$keep" ]; then
      rm -f "$log.$n" "$log.$n.gz"
      continue
    fi
    if [ -e "$log.$n.gz" ]; then mv "$log.$n.gz" "$log.$((n + 1)).gz"; fi
    if [ -e "$log.$n" ]; then gzip -n -c "$log.$n" > "$log.$((n + 1)).gz"; chmod --reference="$log.$n" "$log.$((n + 1)).gz"; rm "$log.$n"; fi
  done
  cp -p "$log" "$log.1"
  : > "$log"
done
