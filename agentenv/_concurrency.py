"""The one seam through which the async batch API bounds how many episodes run at once.

Today it is a counting semaphore per event loop. The lane scheduler (``agentenv/_scheduler.py``,
being written) replaces :func:`episode_slots` and nothing else: callers only ever ``async with
slots.episode(task):`` around the life of one sandbox-holding episode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any, AsyncIterator


def default_concurrency() -> int:
    """Episodes at once when the caller does not say: two per core, since an episode alternates
    between CPU (the tests) and waiting (sandbox start, the policy)."""
    return max(2, 2 * (os.cpu_count() or 1))


class EpisodeSlots:
    """At most *limit* episodes of one event loop hold a sandbox at the same time."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"concurrency must be at least 1, not {limit}")
        self.limit = limit
        self._semaphore = asyncio.Semaphore(limit)
        self.running = 0
        self.peak = 0

    @contextlib.asynccontextmanager
    async def episode(self, task: Any = None) -> AsyncIterator[None]:
        """Hold one slot for the episode of *task* (the scheduler's lanes will use the task)."""
        async with self._semaphore:
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                yield
            finally:
                self.running -= 1


def episode_slots(limit: int) -> EpisodeSlots:
    """The limiter the batch API uses (the seam: swap the implementation here)."""
    return EpisodeSlots(limit)
