"""Errors."""


class ShippingError(ValueError):
    """Raised for parcels that cannot be shipped."""
