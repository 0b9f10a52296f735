"""Fixed-size batching of a sequence."""
from __future__ import annotations

from typing import Iterator, Sequence, TypeVar

from dataset.sampler import SequentialSampler

T = TypeVar("T")


class Batches:
    """Re-iterable view that yields lists of ``size`` items (last one may be shorter)."""

    def __init__(self, data: Sequence[T], size: int, drop_last: bool = False,
                 sampler: SequentialSampler | None = None) -> None:
        if size < 1:
            raise ValueError("size must be positive")
        self.data = data
        self.size = size
        self.drop_last = drop_last
        self.sampler = sampler or SequentialSampler(len(data))

    def __len__(self) -> int:
        full, rest = divmod(len(self.data), self.size)
        return full + (1 if rest and not self.drop_last else 0)

    def __iter__(self) -> Iterator[list[T]]:
        batch: list[T] = []
        for index in self.sampler:
            batch.append(self.data[index])
            if len(batch) == self.size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch
