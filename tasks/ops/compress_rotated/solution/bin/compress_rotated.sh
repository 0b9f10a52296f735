#!/bin/bash
# Compress rotated logs below $ROOT/var/log (name.log.N with N >= 2; .1 stays plain for tools that
# still read it), keeping their mode; already compressed ones are left alone.
set -euo pipefail
find "$1/var/log" -type f -regex '.*\.log\.[0-9]+' | while read -r f; do
  n="${f##*.}"
  [ "$n" -ge 2 ] || continue
  gzip -n -c "$f" > "$f.gz"
  chmod --reference="$f" "$f.gz"
  rm "$f"
done
