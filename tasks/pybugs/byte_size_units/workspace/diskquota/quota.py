"""A user's quota."""
from __future__ import annotations

from dataclasses import dataclass

from diskquota.units import parse_size


@dataclass
class Quota:
    limit: int
    used: int = 0

    @classmethod
    def from_text(cls, limit: str) -> "Quota":
        return cls(parse_size(limit))

    def would_exceed(self, size: str) -> bool:
        return self.used + parse_size(size) > self.limit
