"""Money primitives."""
from __future__ import annotations

from decimal import Decimal

CENT = Decimal("0.01")


def to_decimal(value: Decimal | str | float | int) -> Decimal:
    """Convert without binary float artefacts (floats go through repr)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value)
