"""Errors."""


class RomanError(ValueError):
    """Raised by this package."""
