"""Human durations ('1h30m', '2d 4h', '90s') for job timeouts in the scheduler's config."""

import re

UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_TOKEN = re.compile(r"(\d+)\s*([wdhms])")


def parse_duration(text):
    """Seconds in *text*; units must appear from largest to smallest, each at most once."""
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    if text.isdigit():
        return int(text)
    pos, total, last_rank = 0, 0, -1
    order = list(UNITS)
    for m in _TOKEN.finditer(text):
        if text[pos:m.start()].strip():
            raise ValueError(f"unexpected {text[pos:m.start()].strip()!r} in {text!r}")
        rank = order.index(m.group(2))
        if rank <= last_rank:
            raise ValueError(f"units out of order or repeated in {text!r}")
        last_rank = rank
        total += int(m.group(1)) * UNITS[m.group(2)]
        pos = m.end()
    if pos == 0 or text[pos:].strip():
        raise ValueError(f"not a duration: {text!r}")
    return total


def format_duration(seconds, max_units=2):
    """'1h 30m'; at most *max_units* non-zero units, the rest dropped (not rounded)."""
    if seconds < 0:
        raise ValueError("negative duration")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        if seconds >= size:
            count, seconds = divmod(seconds, size)
            parts.append(f"{count}{unit}")
        if len(parts) == max_units:
            break
    return " ".join(parts)
