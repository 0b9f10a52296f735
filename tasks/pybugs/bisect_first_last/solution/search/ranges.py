"""Binary search helpers over sorted lists."""
from __future__ import annotations

from typing import Sequence

from search.bounds import lower_bound, upper_bound


def find_first(items: Sequence[int], target: int) -> int:
    """Index of the first ``target`` or -1."""
    i = lower_bound(items, target)
    return i if i < len(items) and items[i] == target else -1


def find_range(items: Sequence[int], target: int) -> tuple[int, int]:
    """(first, last) indexes of ``target`` or (-1, -1)."""
    first = find_first(items, target)
    if first == -1:
        return (-1, -1)
    return (first, upper_bound(items, target) - 1)


def count_between(items: Sequence[int], lo: int, hi: int) -> int:
    """How many items satisfy lo <= x <= hi."""
    return max(0, upper_bound(items, hi) - lower_bound(items, lo))
