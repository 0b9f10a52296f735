"""Free time computation."""
from __future__ import annotations

from typing import Iterable

from calendarkit.intervals import Interval, merge_intervals


def free_slots(busy: Iterable[Interval], day_start: int, day_end: int) -> list[Interval]:
    """Gaps (non-empty) between busy intervals within [day_start, day_end)."""
    slots: list[Interval] = []
    cursor = day_start
    for s, e in merge_intervals(busy):
        s, e = max(s, day_start), min(e, day_end)
        if s >= e:
            continue
        if s > cursor:
            slots.append((cursor, s))
        cursor = max(cursor, e)
    if cursor < day_end:
        slots.append((cursor, day_end))
    return [(a, b) for a, b in slots if b > a]
