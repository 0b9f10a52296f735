"""Note model."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Note:
    id: int
    title: str
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        tags = ", ".join(self.tags) if self.tags else "-"
        return f"#{self.id} {self.title} [{tags}]"
