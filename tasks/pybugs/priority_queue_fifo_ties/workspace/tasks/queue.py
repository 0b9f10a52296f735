"""Priority task queue."""
from __future__ import annotations

import heapq
import itertools

from tasks.model import Task


class TaskQueue:
    """Lowest priority number first; FIFO among equal priorities."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Task]] = []
        self._counter = itertools.count()

    def push(self, task: Task) -> None:
        heapq.heappush(self._heap, (task.priority, task))

    def pop(self) -> Task:
        if not self._heap:
            raise IndexError("pop from empty TaskQueue")
        return heapq.heappop(self._heap)[-1]

    def peek(self) -> Task:
        if not self._heap:
            raise IndexError("peek at empty TaskQueue")
        return self._heap[0][-1]

    def __len__(self) -> int:
        return len(self._heap)

    def drain(self) -> list[Task]:
        out = []
        while self._heap:
            out.append(self.pop())
        return out
