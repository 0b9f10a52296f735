"""Clocks."""
from __future__ import annotations

import time


def monotonic() -> float:
    return time.monotonic()


class FakeClock:
    """Manually advanced clock for tests."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
