"""Render simple ASCII tables."""
from __future__ import annotations

from typing import Any, Sequence

from textreport.cells import format_cell, is_number


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[int]:
    """Width of each column: the longest of the header and every formatted cell."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(format_cell(value)))
    return widths


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Return the table as text; numbers are right-aligned, text left-aligned."""
    widths = column_widths(headers, rows)
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [sep, "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |", sep]
    for row in rows:
        cells = []
        for value, w in zip(row, widths):
            text = format_cell(value)
            cells.append(text.rjust(w) if is_number(value) else text.ljust(w))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(sep)
    return "\n".join(lines)
