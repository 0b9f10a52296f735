"""Errors."""


class EnvSyntaxError(ValueError):
    """Raised by this package."""
