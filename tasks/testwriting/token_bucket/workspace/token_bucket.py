"""A token-bucket rate limiter with an injectable clock, guarding the public API."""

import time


class TokenBucket:
    def __init__(self, rate, capacity, clock=time.monotonic):
        if rate <= 0 or capacity <= 0:
            raise ValueError("rate and capacity must be positive")
        self.rate = float(rate)
        self.capacity = float(capacity)
        self.clock = clock
        self.tokens = float(capacity)
        self.updated = clock()

    def _refill(self):
        now = self.clock()
        elapsed = now - self.updated
        if elapsed > 0:
            self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
            self.updated = now

    def try_acquire(self, n=1):
        """Take *n* tokens if they are there; never blocks."""
        if n > self.capacity:
            raise ValueError(f"cannot take {n} tokens from a bucket of {self.capacity:g}")
        self._refill()
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False

    def wait_time(self, n=1):
        """Seconds until *n* tokens will be available (0 when they are now)."""
        self._refill()
        missing = n - self.tokens
        if missing <= 0:
            return 0.0
        return missing / self.rate


class KeyedLimiter:
    """One bucket per key (client IP, API key), created on first use."""

    def __init__(self, rate, capacity, clock=time.monotonic):
        self.rate, self.capacity, self.clock = rate, capacity, clock
        self.buckets = {}

    def allow(self, key, n=1):
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.rate, self.capacity, self.clock)
        return bucket.try_acquire(n)
