"""Errors."""


class UnitError(ValueError):
    """Bad size or unit."""
