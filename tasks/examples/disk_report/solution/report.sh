#!/bin/bash
# Usage: report.sh DIR  -- sizes of the files below DIR, largest first, then the total.
dir="$1"
total=0
listing=$(find "$dir" -type f -printf '%s\t%p\n' | sort -t $'\t' -k1,1rn)
if [ -n "$listing" ]; then
    printf '%s\n' "$listing"
    while IFS=$'\t' read -r size _; do
        total=$((total + size))
    done <<< "$listing"
fi
printf 'TOTAL\t%s\n' "$total"
