"""Text patterns: '#' alive, '.' dead."""
from __future__ import annotations


def parse_pattern(text: str) -> tuple[int, int, set[tuple[int, int]]]:
    rows = [r for r in text.strip().splitlines()]
    cells = {(x, y) for y, row in enumerate(rows) for x, ch in enumerate(row.strip()) if ch == "#"}
    return len(rows[0].strip()), len(rows), cells


def render(width: int, height: int, alive: set[tuple[int, int]]) -> str:
    return "\n".join("".join("#" if (x, y) in alive else "." for x in range(width)) for y in range(height))
