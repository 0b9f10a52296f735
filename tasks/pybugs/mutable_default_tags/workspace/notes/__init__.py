"""Notes package."""
from notes.model import Note
from notes.store import NoteStore

__all__ = ["Note", "NoteStore"]
