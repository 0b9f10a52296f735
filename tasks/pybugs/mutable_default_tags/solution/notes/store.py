"""In-memory note storage."""
from __future__ import annotations

import itertools
from typing import Optional

from notes.model import Note


class NoteStore:
    """Keeps notes in memory, keyed by id."""

    def __init__(self) -> None:
        self._notes: dict[int, Note] = {}
        self._ids = itertools.count(1)

    def create(self, title: str, tags: Optional[list[str]] = None,
               metadata: Optional[dict[str, str]] = None) -> Note:
        """Create a note. ``tags`` and ``metadata`` are copied, never shared."""
        tags = list(tags) if tags is not None else []
        metadata = dict(metadata) if metadata is not None else {}
        note = Note(next(self._ids), title, tags, metadata)
        self._notes[note.id] = note
        return note

    def tag(self, note_id: int, tag: str) -> Note:
        note = self._notes[note_id]
        if tag not in note.tags:
            note.tags.append(tag)
        return note

    def annotate(self, note_id: int, key: str, value: str) -> Note:
        note = self._notes[note_id]
        note.metadata[key] = value
        return note

    def find_by_tag(self, tag: str) -> list[Note]:
        return [n for n in self._notes.values() if tag in n.tags]
