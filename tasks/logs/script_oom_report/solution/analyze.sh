#!/bin/bash
# Which process the kernel's OOM killer killed, and its systemd unit: bash analyze.sh logs/syslog
set -euo pipefail
log=$1
line=$(grep -m1 'Out of memory: Killed process' "$log")
pid=$(sed -E 's/.*Killed process ([0-9]+) .*/\1/' <<<"$line")
proc=$(sed -E 's/.*Killed process [0-9]+ \(([^)]+)\).*/\1/' <<<"$line")
unit=$(grep -m1 'has been killed by the OOM killer' "$log" | sed -E 's/.*systemd\[1\]: ([^:]+): A process.*/\1/')
printf '{"oom_process": "%s", "oom_pid": %s, "oom_service": "%s"}\n' "$proc" "$pid" "$unit"
