"""Caching primitives."""
from kvcache.lru import LRUCache
from kvcache.stats import CacheStats

__all__ = ["CacheStats", "LRUCache"]
