"""Compact durations like 1h30m or 2d4h."""
from __future__ import annotations

import re

from jobs.errors import DurationError

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)([dhms])")


def parse_duration(text: str) -> int:
    """Seconds in ``text``; units d, h, m, s in that order, each at most once."""
    text = text.strip().lower()
    if not text:
        raise DurationError("empty duration")
    pos, total, last = 0, 0, -1
    order = list(UNITS)
    for m in _PART.finditer(text):
        if m.start() != pos:
            break
        idx = order.index(m.group(2))
        if idx <= last:
            raise DurationError(f"units out of order in {text!r}")
        last = idx
        total += int(m.group(1)) * UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text):
        raise DurationError(f"cannot parse {text!r}")
    return total


def format_duration(seconds: int) -> str:
    if seconds < 0:
        raise DurationError("negative")
    if seconds == 0:
        return "0s"
    out = []
    for unit, size in UNITS.items():
        n, seconds = divmod(seconds, size)
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)
