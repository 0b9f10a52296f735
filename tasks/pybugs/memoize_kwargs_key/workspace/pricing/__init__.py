"""Pricing service helpers."""
from pricing.cache import memoize
from pricing.quotes import RATES, quote

__all__ = ["RATES", "memoize", "quote"]
