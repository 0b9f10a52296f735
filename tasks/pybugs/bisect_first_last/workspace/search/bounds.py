"""Hand-rolled bisection (counts comparisons for profiling)."""
from __future__ import annotations

from typing import Sequence


def lower_bound(items: Sequence[int], target: int) -> int:
    """First index i with items[i] >= target."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def upper_bound(items: Sequence[int], target: int) -> int:
    """First index i with items[i] > target."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo
