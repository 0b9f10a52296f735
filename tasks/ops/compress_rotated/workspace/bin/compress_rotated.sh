#!/bin/bash
# usage: bash bin/compress_rotated.sh ROOT
set -euo pipefail
root="$1"
