#!/bin/bash
# usage: bash bin/enforce_permissions.sh ROOT
set -euo pipefail
root="$1"
