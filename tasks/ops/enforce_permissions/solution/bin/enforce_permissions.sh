#!/bin/bash
# Apply $ROOT/etc/perms.conf ("MODE GLOB" lines, globs relative to $ROOT, later lines win) to what exists.
set -euo pipefail
root="$1"
shopt -s nullglob globstar
while read -r mode pattern; do
  case "$mode" in ''|'#'*) continue ;; esac
  for path in "$root"/$pattern; do
    [ -L "$path" ] && continue
    chmod "$mode" "$path"
  done
done < "$root/etc/perms.conf"
