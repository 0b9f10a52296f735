"""Price quotes."""
from __future__ import annotations

from pricing.cache import memoize

BASE = {"A": 100, "B": 250}
RATES = {"USD": 1.0, "EUR": 0.5, "GBP": 0.25}
CALLS: list[tuple] = []


@memoize
def quote(sku: str, currency: str = "USD", qty: int = 1) -> float:
    """Price of ``qty`` units of ``sku`` in ``currency``."""
    CALLS.append((sku, currency, qty))
    return BASE[sku] * RATES[currency] * qty
