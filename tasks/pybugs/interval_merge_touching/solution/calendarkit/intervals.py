"""Interval arithmetic for calendars (half-open [start, end))."""
from __future__ import annotations

from typing import Iterable

Interval = tuple[int, int]


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Merge overlapping or touching intervals; result is sorted."""
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if start > end:
            raise ValueError(f"bad interval {(start, end)}")
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]
