"""In-memory key-value store."""
from __future__ import annotations

from typing import Any

from kvstore.transaction import Transaction


class KeyValueStore:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.commits = 0
        self.rollbacks = 0

    def set(self, key: str, value: Any) -> None:
        self.data[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def transaction(self) -> Transaction:
        return Transaction(self)
