"""Exceptions raised by the inventory package."""


class InventoryError(Exception):
    """Base class."""


class CapacityError(InventoryError):
    """Raised when a bin would overflow or underflow."""


class UnknownItemError(InventoryError, KeyError):
    """Raised for an unknown SKU."""
