#!/usr/bin/env bash
# Usage: rotate_logs.sh DIR [KEEP]
# Rotate every non-empty *.log in DIR: NAME.log -> NAME.log.1 -> ... -> NAME.log.KEEP.
# At most KEEP rotated copies are kept and a fresh empty NAME.log is created.
# Prints "rotated NAME.log" for each file rotated.
set -euo pipefail
source "$(dirname "$0")/common.sh"

dir=${1:-}
keep=${2:-3}
[ -d "$dir" ] || die "not a directory: $dir"
is_uint "$keep" || die "KEEP must be a positive integer"

shopt -s nullglob
for log in "$dir"/*.log; do
  [ -s "$log" ] || continue
  rm -f -- "$log.$keep"
  for ((i = keep - 1; i >= 1; i--)); do
    if [ -e "$log.$i" ]; then
      mv -- "$log.$i" "$log.$((i + 1))"
    fi
  done
  mv -- "$log" "$log.1"
  : > "$log"
  echo "rotated $(basename -- "$log")"
done
