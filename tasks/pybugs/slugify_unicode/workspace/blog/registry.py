"""Known slugs."""
from __future__ import annotations


class SlugRegistry:
    def __init__(self, existing: list[str] | None = None) -> None:
        self._slugs = set(existing or [])

    def __contains__(self, slug: str) -> bool:
        return slug in self._slugs

    def add(self, slug: str) -> None:
        self._slugs.add(slug)
