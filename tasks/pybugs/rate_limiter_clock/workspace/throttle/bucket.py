"""Token bucket rate limiter with an injectable clock."""
from __future__ import annotations

from typing import Callable

from throttle.clock import monotonic


class TokenBucket:
    """Allows bursts of up to ``capacity`` and a sustained ``rate`` per second."""

    def __init__(self, capacity: int, rate: float, clock: Callable[[], float] = monotonic) -> None:
        if capacity < 1 or rate <= 0:
            raise ValueError("capacity must be >= 1 and rate > 0")
        self.capacity = capacity
        self.rate = rate
        self.clock = clock
        self.tokens = float(capacity)
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        elapsed = max(0.0, now - self.updated)
        self.tokens = self.tokens + elapsed * self.rate
        self.updated = now

    def try_acquire(self, n: int = 1) -> bool:
        """Take ``n`` tokens if available."""
        if n > self.capacity:
            raise ValueError("n exceeds capacity")
        self._refill()
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False

    def retry_after(self, n: int = 1) -> float:
        """Seconds until ``n`` tokens will be available (0.0 if already)."""
        self._refill()
        missing = n - self.tokens
        return missing / self.rate
