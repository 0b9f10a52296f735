from decimal import Decimal

import pytest
from shipping import ShippingError, compute_shipping, rate_for
from shipping.rates import RATE_TABLE

LEGACY = {
    ("domestic", 1): "4.50", ("domestic", 1.01): "7.90", ("domestic", 20): "14.00",
    ("eu", 0.1): "9.00", ("eu", 19.9): "29.00", ("world", 1): "16.00", ("world", 5): "32.00",
}


def test_table_matches_legacy():
    for (zone, w), price in LEGACY.items():
        assert rate_for(zone, w) == Decimal(price)
        assert compute_shipping(zone, w) == Decimal(price)


def test_express_totals():
    assert compute_shipping("domestic", 1, express=True) == Decimal("9.50")
    assert compute_shipping("eu", 10, express=True) == Decimal("43.50")


def test_rate_for_errors():
    for args in (("eu", 0), ("eu", -1), ("nowhere", 1), ("domestic", 21)):
        with pytest.raises(ShippingError):
            rate_for(*args)


def test_table_is_data():
    assert set(RATE_TABLE) == {"domestic", "eu", "world"}
