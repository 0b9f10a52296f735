"""Shipping prices, table driven."""
from __future__ import annotations

from decimal import Decimal

from shipping.errors import ShippingError

RATE_TABLE: dict = {}  # TODO: move the prices below into this table


def rate_for(zone: str, weight_kg: float) -> Decimal:
    """Base price for a parcel of ``weight_kg`` to ``zone``."""
    raise NotImplementedError


def express_surcharge(base: Decimal) -> Decimal:
    raise NotImplementedError


def compute_shipping(zone, weight_kg, express=False):
    if weight_kg <= 0:
        raise ShippingError("weight must be positive")
    if zone == "domestic":
        if weight_kg <= 1:
            p = Decimal("4.50")
        elif weight_kg <= 5:
            p = Decimal("7.90")
        elif weight_kg <= 20:
            p = Decimal("14.00")
        else:
            raise ShippingError(f"too heavy for {zone}: {weight_kg} kg")
    elif zone == "eu":
        if weight_kg <= 1:
            p = Decimal("9.00")
        elif weight_kg <= 5:
            p = Decimal("15.50")
        elif weight_kg <= 20:
            p = Decimal("29.00")
        else:
            raise ShippingError(f"too heavy for {zone}: {weight_kg} kg")
    elif zone == "world":
        if weight_kg <= 1:
            p = Decimal("16.00")
        elif weight_kg <= 5:
            p = Decimal("32.00")
        else:
            raise ShippingError(f"too heavy for {zone}: {weight_kg} kg")
    else:
        raise ShippingError(f"unknown zone {zone!r}")
    if express:
        extra = p * Decimal("1.5") - p
        if extra < Decimal("5.00"):
            extra = Decimal("5.00")
        p = p + extra
    return p.quantize(Decimal("0.01"))
