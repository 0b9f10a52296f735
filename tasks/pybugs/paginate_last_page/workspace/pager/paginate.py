"""Offset pagination helpers."""
from __future__ import annotations

from typing import Generic, Sequence, TypeVar

from pager.page import Page, PageOutOfRange

T = TypeVar("T")


class Paginator(Generic[T]):
    """Split a sequence into numbered pages (1-based)."""

    def __init__(self, items: Sequence[T], page_size: int) -> None:
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        self.items = items
        self.page_size = page_size

    @property
    def num_pages(self) -> int:
        """Number of pages; an empty collection still has one empty page."""
        return len(self.items) // self.page_size

    def page(self, number: int) -> Page[T]:
        """Return page ``number`` (1-based)."""
        if number < 1 or number > self.num_pages:
            raise PageOutOfRange(number)
        start = (number - 1) * self.page_size
        end = start + self.page_size
        return Page(list(self.items[start:end]), number, self.num_pages)

    def __iter__(self):
        for n in range(1, self.num_pages + 1):
            yield self.page(n)
