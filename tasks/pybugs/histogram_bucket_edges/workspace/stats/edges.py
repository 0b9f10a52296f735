"""Bin edges."""
from __future__ import annotations


def bin_edges(lo: float, hi: float, bins: int) -> list[float]:
    width = (hi - lo) / bins
    return [lo + i * width for i in range(bins)] + [hi]
