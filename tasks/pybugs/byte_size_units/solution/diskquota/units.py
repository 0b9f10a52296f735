"""Human readable byte sizes."""
from __future__ import annotations

import re

from diskquota.errors import UnitError

DECIMAL = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
BINARY = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str) -> int:
    """Parse ``"1.5 GB"``/``"512KiB"``/``"42"`` into bytes (int, truncated)."""
    m = _SIZE.match(text)
    if not m:
        raise UnitError(f"cannot parse size {text!r}")
    number, unit = m.groups()
    unit = unit.lower() or "b"
    table = {**DECIMAL, **BINARY}
    if unit not in table:
        raise UnitError(f"unknown unit {unit!r}")
    return int(float(number) * table[unit])


def format_size(n: int, binary: bool = False) -> str:
    """Format bytes with one decimal, e.g. ``1.5 MB`` or ``1.0 KiB``."""
    if n < 0:
        raise UnitError("negative size")
    steps = ["B", "KiB", "MiB", "GiB", "TiB"] if binary else ["B", "kB", "MB", "GB", "TB"]
    base = 1024 if binary else 1000
    value = float(n)
    for unit in steps:
        if value < base or unit == steps[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= base
    raise AssertionError("unreachable")
