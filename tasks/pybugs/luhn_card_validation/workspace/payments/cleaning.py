"""Input normalisation."""
from __future__ import annotations

from typing import Optional


def normalize_number(text: str) -> Optional[str]:
    """Strip spaces and dashes; None if anything else is not a digit."""
    cleaned = text.replace(" ", "").replace("-", "")
    return cleaned if cleaned.isdigit() and cleaned.isascii() else None
