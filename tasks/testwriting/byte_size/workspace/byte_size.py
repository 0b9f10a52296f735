"""Byte sizes in config files and reports: '1.5 GiB', '10MB', '512k' both ways."""

import re

_BINARY = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
_DECIMAL = ["B", "kB", "MB", "GB", "TB", "PB"]
_MULT = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000 ** 2, "mb": 1000 ** 2, "mib": 1024 ** 2,
         "g": 1000 ** 3, "gb": 1000 ** 3, "gib": 1024 ** 3, "t": 1000 ** 4, "tb": 1000 ** 4, "tib": 1024 ** 4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text):
    """Bytes in *text* (an int; fractions of a byte are refused)."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    unit = m.group(2).lower()
    if unit not in _MULT:
        raise ValueError(f"unknown unit {m.group(2)!r} in {text!r}")
    number = m.group(1)
    whole, _, frac = number.partition(".")
    scale = _MULT[unit]
    value = int(whole) * scale + (int(frac) * scale) // 10 ** len(frac) if frac else int(whole) * scale
    if frac and (int(frac) * scale) % 10 ** len(frac):
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return value


def format_size(n, binary=True, precision=1):
    """'1.5 GiB': the largest unit that keeps the number at least 1; trailing '.0' dropped."""
    if n < 0:
        raise ValueError("negative size")
    units, base = (_BINARY, 1024) if binary else (_DECIMAL, 1000)
    value, i = float(n), 0
    while value >= base and i < len(units) - 1:
        value /= base
        i += 1
    if i == 0:
        return f"{n} B"
    text = f"{value:.{precision}f}".rstrip("0").rstrip(".") if precision else f"{value:.0f}"
    return f"{text} {units[i]}"
