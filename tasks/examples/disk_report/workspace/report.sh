#!/bin/bash
# Usage: report.sh DIR  -- sizes of the files below DIR, largest first, then the total.
dir="$1"
total=0
for f in $(find "$dir" -type f); do
    size=$(stat -c %s $f)
    echo -e "$size\t$f"
done | sort -rn
echo -e "TOTAL\t$total"
