# Shared helpers for the ops scripts (sourced, not executed).
die() {
  echo "error: $*" >&2
  exit 2
}

is_uint() {
  [[ "$1" =~ ^[1-9][0-9]*$ ]]
}
