"""Shipping cost calculation."""
from shipping.errors import ShippingError
from shipping.rates import compute_shipping, express_surcharge, rate_for

__all__ = ["ShippingError", "compute_shipping", "express_surcharge", "rate_for"]
