"""Errors."""


class InvalidTransition(Exception):
    """Raised when an order cannot move to the requested state."""
