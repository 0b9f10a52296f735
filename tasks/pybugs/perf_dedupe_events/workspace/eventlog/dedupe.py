"""Deduplicate event records."""
from __future__ import annotations

from typing import Iterable

from eventlog.model import Event


def dedupe_events(events: Iterable[Event]) -> list[Event]:
    """Keep the first event for each (source, event_id), preserving order."""
    out: list[Event] = []
    for ev in events:
        if any(o.key() == ev.key() for o in out):
            continue
        out.append(ev)
    return out


def unique_sources(events: Iterable[Event]) -> list[str]:
    """Sources in first-seen order."""
    sources: list[str] = []
    for ev in events:
        if ev.source not in sources:
            sources.append(ev.source)
    return sources


def duplicate_count(events: list[Event]) -> int:
    return len(events) - len(dedupe_events(events))
