"""Deduplicate event records."""
from __future__ import annotations

from typing import Iterable

from eventlog.model import Event


def dedupe_events(events: Iterable[Event]) -> list[Event]:
    """Keep the first event for each (source, event_id), preserving order."""
    seen: set[tuple[str, int]] = set()
    out: list[Event] = []
    for ev in events:
        key = ev.key()
        if key in seen:
            continue
        seen.add(key)
        out.append(ev)
    return out


def unique_sources(events: Iterable[Event]) -> list[str]:
    """Sources in first-seen order."""
    return list(dict.fromkeys(ev.source for ev in events))


def duplicate_count(events: list[Event]) -> int:
    return len(events) - len(dedupe_events(events))
