"""Errors."""


class InvalidVersion(ValueError):
    """Not a semantic version."""
