"""Parse the date formats accepted by the report generator."""
from __future__ import annotations

import re
from datetime import date

from reports.errors import InvalidDate

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_EU = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


def _build(year: int, month: int, day: int, raw: str) -> date:
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise InvalidDate(f"{raw!r}: {exc}") from None


def parse_date(text: str) -> date:
    """Parse ``YYYY-MM-DD``, ``DD/MM/YYYY`` or ``YYYYMMDD``."""
    raw = text.strip()
    m = _ISO.match(raw) or _COMPACT.match(raw)
    if m:
        y, mo, d = (int(g) for g in m.groups())
        return _build(y, mo, d, raw)
    m = _EU.match(raw)
    if m:
        d, mo, y = (int(g) for g in m.groups())
        return _build(y, mo, d, raw)
    raise InvalidDate(f"unrecognised date {raw!r}")


def parse_range(text: str) -> tuple[date, date]:
    """Parse ``START..END``; END must not be before START."""
    if ".." not in text:
        raise InvalidDate(f"not a range: {text!r}")
    a, b = text.split("..", 1)
    start, end = parse_date(a), parse_date(b)
    if end < start:
        raise InvalidDate(f"range ends before it starts: {text!r}")
    return start, end
