"""Least-recently-used cache."""
from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Hashable, Optional, TypeVar

from kvcache.stats import CacheStats

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Bounded mapping that evicts the least recently *used* (read or written) key."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._data: OrderedDict[K, V] = OrderedDict()
        self.stats = CacheStats()

    def get(self, key: K, default: Optional[V] = None) -> Optional[V]:
        if key not in self._data:
            self.stats.misses += 1
            return default
        self.stats.hits += 1
        return self._data[key]

    def put(self, key: K, value: V) -> None:
        if len(self._data) >= self.capacity:
            evicted, _ = self._data.popitem(last=False)
            self.stats.evictions.append(evicted)
        self._data[key] = value

    def keys(self) -> list[K]:
        """Keys from least to most recently used."""
        return list(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data
