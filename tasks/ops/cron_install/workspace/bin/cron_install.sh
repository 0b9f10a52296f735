#!/bin/bash
# usage: bash bin/cron_install.sh ROOT
set -euo pipefail
root="$1"
