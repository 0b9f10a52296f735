#!/bin/bash
# usage: bash bin/backup_retention.sh ROOT
set -euo pipefail
root="$1"
