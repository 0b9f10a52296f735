"""A synchronous publish/subscribe bus."""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from events.errors import HandlerErrors

Handler = Callable[[Any], None]


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)

    def subscribe(self, topic: str, handler: Handler) -> None:
        self._handlers[topic].append(handler)

    def unsubscribe(self, topic: str, handler: Handler) -> None:
        self._handlers[topic].remove(handler)

    def emit(self, topic: str, payload: Any = None) -> int:
        """Call every handler subscribed when emit() started; return how many ran."""
        count = 0
        for handler in self._handlers[topic]:
            handler(payload)
            count += 1
        return count
