#!/bin/bash
# Harden $ROOT/etc/ssh/sshd_config: PermitRootLogin no, PasswordAuthentication no, X11Forwarding no,
# MaxAuthTries 3. The first line that sets each (commented or not) is replaced, later ones dropped;
# missing ones are appended; every other line stays.
set -euo pipefail
conf="$1/etc/ssh/sshd_config"
for pair in "PermitRootLogin no" "PasswordAuthentication no" "X11Forwarding no" "MaxAuthTries 3"; do
  key=${pair%% *}
  if grep -qiE "^#?[[:space:]]*$key[[:space:]]" "$conf"; then
    awk -v key="$key" -v line="$pair" '{ probe = $0; sub(/^#?[ \t]*/, "", probe); split(probe, w, /[ \t]+/) }
      tolower(w[1]) == tolower(key) && w[2] != "" {
        if (!done) { print line; done = 1 }
        next }
      { print }' "$conf" > "$conf.tmp"
    cat "$conf.tmp" > "$conf"
    rm "$conf.tmp"
  else
    echo "$pair" >> "$conf"
  fi
done
