"""Chunking iterables lazily."""
from __future__ import annotations

from itertools import islice
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")


def batched(iterable: Iterable[T], n: int) -> Iterator[tuple[T, ...]]:
    """Yield tuples of ``n`` items; the last one may be shorter."""
    if n < 1:
        raise ValueError("n must be at least one")
    for start in range(0, len(iterable) - n + 1, n):
        yield tuple(iterable[start:start + n])
