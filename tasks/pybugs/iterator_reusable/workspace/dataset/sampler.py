"""Index samplers (re-iterable)."""
from __future__ import annotations

from typing import Iterator


class SequentialSampler:
    """Yields 0..n-1 each time it is iterated."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n))

    def __len__(self) -> int:
        return self.n


class StridedSampler(SequentialSampler):
    """Yields every ``stride``-th index first, then the rest (deterministic shuffle)."""

    def __init__(self, n: int, stride: int = 2) -> None:
        super().__init__(n)
        self.stride = stride

    def __iter__(self) -> Iterator[int]:
        for start in range(self.stride):
            yield from range(start, self.n, self.stride)
