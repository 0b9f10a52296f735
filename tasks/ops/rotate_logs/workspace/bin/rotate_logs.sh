#!/bin/bash
# usage: bash bin/rotate_logs.sh ROOT
set -euo pipefail
root="$1"
