"""Equal-width histograms."""
from __future__ import annotations

from typing import Sequence

from stats.edges import bin_edges


def histogram(values: Sequence[float], bins: int) -> tuple[list[int], list[float]]:
    """Counts per bin and the bins+1 edges; the last bin includes its right edge."""
    if bins < 1:
        raise ValueError("bins must be >= 1")
    if not values:
        return [0] * bins, []
    lo, hi = min(values), max(values)
    edges = bin_edges(lo, hi, bins)
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        counts[int((v - lo) / width)] += 1
    return counts, edges
