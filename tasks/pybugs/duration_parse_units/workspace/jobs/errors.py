"""Errors."""


class DurationError(ValueError):
    """Raised by this package."""
