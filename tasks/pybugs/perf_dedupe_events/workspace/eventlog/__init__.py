"""Event log processing."""
from eventlog.dedupe import dedupe_events, duplicate_count, unique_sources
from eventlog.model import Event

__all__ = ["Event", "dedupe_events", "duplicate_count", "unique_sources"]
