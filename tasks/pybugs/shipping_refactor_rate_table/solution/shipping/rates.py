"""Shipping prices, table driven."""
from __future__ import annotations

from decimal import Decimal

from shipping.errors import ShippingError

# zone -> list of (max_weight_kg inclusive, price); checked in order
RATE_TABLE: dict[str, list[tuple[float, Decimal]]] = {
    "domestic": [(1, Decimal("4.50")), (5, Decimal("7.90")), (20, Decimal("14.00"))],
    "eu": [(1, Decimal("9.00")), (5, Decimal("15.50")), (20, Decimal("29.00"))],
    "world": [(1, Decimal("16.00")), (5, Decimal("32.00"))],
}
EXPRESS_FACTOR = Decimal("1.5")
EXPRESS_MINIMUM = Decimal("5.00")


def rate_for(zone: str, weight_kg: float) -> Decimal:
    """Base price for a parcel of ``weight_kg`` to ``zone``."""
    if weight_kg <= 0:
        raise ShippingError("weight must be positive")
    try:
        brackets = RATE_TABLE[zone]
    except KeyError:
        raise ShippingError(f"unknown zone {zone!r}") from None
    for max_weight, price in brackets:
        if weight_kg <= max_weight:
            return price
    raise ShippingError(f"too heavy for {zone}: {weight_kg} kg")


def express_surcharge(base: Decimal) -> Decimal:
    """Extra charged for express: 50% of base, at least 5.00."""
    return max(base * EXPRESS_FACTOR - base, EXPRESS_MINIMUM)


def compute_shipping(zone: str, weight_kg: float, express: bool = False) -> Decimal:
    """Total shipping price (kept for backwards compatibility)."""
    base = rate_for(zone, weight_kg)
    if express:
        base += express_surcharge(base)
    return base.quantize(Decimal("0.01"))
