#!/usr/bin/env bash
# Usage: top_errors.sh LOGFILE [N]
# Print the N (default 5) request paths with the most 5xx responses in a
# combined-format access log, as "COUNT PATH", most frequent first, ties by path.
set -euo pipefail
source "$(dirname "$0")/common.sh"

log=${1:-}
n=${2:-5}
[ -n "$log" ] || die "usage: top_errors.sh LOGFILE [N]"
[ -r "$log" ] || die "cannot read $log"
is_uint "$n" || die "N must be a positive integer"

awk '$9 ~ /^5[0-9][0-9]$/ { print $7 }' "$log" \
  | sort \
  | uniq -c \
  | awk '{ print $1, $2 }' \
  | sort -k1,1nr -k2,2 \
  | awk -v n="$n" 'NR <= n'
