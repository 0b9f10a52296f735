"""Networking utilities."""
from netutil.errors import RetryError
from netutil.retry import backoff_delays, retry

__all__ = ["RetryError", "backoff_delays", "retry"]
