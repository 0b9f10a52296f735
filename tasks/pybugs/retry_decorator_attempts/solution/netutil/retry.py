"""Retry decorator with exponential backoff."""
from __future__ import annotations

import functools
import time
from typing import Any, Callable, Tuple, Type


def backoff_delays(attempts: int, base: float, factor: float) -> list[float]:
    """Delays slept between attempts: one fewer than the number of attempts."""
    return [base * factor**i for i in range(max(attempts - 1, 0))]


def retry(attempts: int = 3,
          exceptions: Tuple[Type[BaseException], ...] = (Exception,),
          base_delay: float = 0.1,
          factor: float = 2.0,
          sleep: Callable[[float], None] = time.sleep) -> Callable:
    """Call the function up to ``attempts`` times in total.

    Only exceptions listed in ``exceptions`` are retried; anything else propagates at once.
    After the last failed attempt the last exception is re-raised unchanged.
    """
    if attempts < 1:
        raise ValueError("attempts must be >= 1")

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            delays = backoff_delays(attempts, base_delay, factor)
            for attempt in range(attempts):
                try:
                    return func(*args, **kwargs)
                except exceptions:
                    if attempt == attempts - 1:
                        raise
                    sleep(delays[attempt])
            raise AssertionError("unreachable")
        return wrapper
    return decorate
