"""Fixed-size ring buffer for metric samples."""
from __future__ import annotations

from typing import Generic, Iterator, TypeVar

T = TypeVar("T")


class RingBuffer(Generic[T]):
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._data: list[T | None] = [None] * capacity
        self._start = 0
        self._size = 0

    def push(self, value: T) -> None:
        end = (self._start + self._size) % self.capacity
        self._data[end] = value
        if self._size < self.capacity:
            self._size += 1
        else:
            self._start = (self._start + 1) % self.capacity

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        for i in range(self._size):
            yield self._data[(self._start + i) % self.capacity]  # type: ignore[misc]

    def to_list(self) -> list[T]:
        return list(self)

    def latest(self) -> T:
        if not self._size:
            raise IndexError("empty buffer")
        return self._data[(self._start + self._size - 1) % self.capacity]  # type: ignore[return-value]
