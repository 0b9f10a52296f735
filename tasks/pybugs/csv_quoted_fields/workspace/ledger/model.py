"""Transaction model."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable


@dataclass(frozen=True)
class Transaction:
    date: str
    description: str
    amount: Decimal


def total(txs: Iterable[Transaction]) -> Decimal:
    return sum((t.amount for t in txs), Decimal("0"))
