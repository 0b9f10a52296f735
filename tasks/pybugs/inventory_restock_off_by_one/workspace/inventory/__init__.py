"""Tiny inventory package."""
from inventory.errors import CapacityError, UnknownItemError
from inventory.stock import Item, Stock

__all__ = ["CapacityError", "Item", "Stock", "UnknownItemError"]
