"""Cell formatting."""
from __future__ import annotations

from typing import Any


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def format_cell(value: Any) -> str:
    """Floats get two decimals, None becomes empty, everything else str()."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)
