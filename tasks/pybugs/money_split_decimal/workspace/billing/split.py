"""Split monetary amounts without losing cents."""
from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Sequence

from billing.money import CENT, to_decimal


def round_money(value: Decimal | str | float) -> Decimal:
    """Round to cents, half-up."""
    return Decimal(str(round(float(value), 2))).quantize(CENT)


def split_by_weights(total: Decimal | str, weights: Sequence[int]) -> list[Decimal]:
    """Split ``total`` proportionally; parts sum exactly to the rounded total."""
    if not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise ValueError("weights must be non-negative and not all zero")
    amount = round_money(total)
    wsum = sum(weights)
    return [round_money(amount * w / wsum) for w in weights]


def split_amount(total: Decimal | str, ways: int) -> list[Decimal]:
    """Split evenly into ``ways`` parts; earlier parts get the leftover cents."""
    if ways < 1:
        raise ValueError("ways must be >= 1")
    return split_by_weights(total, [1] * ways)
