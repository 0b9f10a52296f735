#!/bin/bash
# usage: bash bin/ssh_hardening.sh ROOT
set -euo pipefail
root="$1"
