"""Errors (RetryError is kept for backwards compatibility)."""


class RetryError(Exception):
    """Deprecated: retry() now re-raises the original exception."""
