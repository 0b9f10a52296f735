"""A single page of results."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, List, TypeVar

T = TypeVar("T")


class PageOutOfRange(IndexError):
    """Raised when a page number does not exist."""


@dataclass
class Page(Generic[T]):
    items: List[T]
    number: int
    total_pages: int

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1
