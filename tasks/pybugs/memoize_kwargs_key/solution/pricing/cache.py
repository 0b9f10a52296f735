"""A small memoization decorator with statistics."""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _make_key(args: tuple, kwargs: dict) -> Hashable:
    """Build a hashable key; keyword order must not matter."""
    return (args, tuple(sorted(kwargs.items())))


def memoize(func: F) -> F:
    """Cache results by arguments. Adds ``cache_info()`` and ``cache_clear()``."""
    cache: dict[Hashable, Any] = {}
    stats = {"hits": 0, "misses": 0}

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = _make_key(args, kwargs)
        if key in cache:
            stats["hits"] += 1
            return cache[key]
        stats["misses"] += 1
        result = func(*args, **kwargs)
        cache[key] = result
        return result

    def cache_info() -> dict[str, int]:
        return {"hits": stats["hits"], "misses": stats["misses"], "size": len(cache)}

    def cache_clear() -> None:
        cache.clear()
        stats["hits"] = stats["misses"] = 0

    wrapper.cache_info = cache_info  # type: ignore[attr-defined]
    wrapper.cache_clear = cache_clear  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
