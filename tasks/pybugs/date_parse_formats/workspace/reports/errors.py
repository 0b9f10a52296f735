"""Errors."""


class InvalidDate(ValueError):
    """Raised for malformed or impossible dates."""
