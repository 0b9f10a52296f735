"""Game of Life on a wrapping (toroidal) grid."""
from __future__ import annotations

from life.patterns import parse_pattern, render


class Board:
    def __init__(self, width: int, height: int, alive: set[tuple[int, int]] | None = None) -> None:
        self.width, self.height = width, height
        self.alive: set[tuple[int, int]] = set(alive or ())

    @classmethod
    def from_text(cls, text: str) -> "Board":
        w, h, cells = parse_pattern(text)
        return cls(w, h, cells)

    def neighbours(self, x: int, y: int) -> int:
        """Live neighbours of (x, y); coordinates wrap around."""
        seen = set()
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx or dy:
                    seen.add(((x + dx) % self.width, (y + dy) % self.height))
        seen.discard((x, y))
        return len(seen & self.alive)

    def step(self) -> "Board":
        new = set()
        for x in range(self.width):
            for y in range(self.height):
                n = self.neighbours(x, y)
                if n == 3 or (n == 2 and (x, y) in self.alive):
                    new.add((x, y))
        return Board(self.width, self.height, new)

    def __str__(self) -> str:
        return render(self.width, self.height, self.alive)
