"""Event record."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    source: str
    event_id: int
    payload: str = ""

    def key(self) -> tuple[str, int]:
        return (self.source, self.event_id)
