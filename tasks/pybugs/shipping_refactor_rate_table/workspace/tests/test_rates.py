from decimal import Decimal

import pytest
from shipping import ShippingError, compute_shipping, express_surcharge, rate_for


def test_legacy_prices():
    assert compute_shipping("domestic", 0.5) == Decimal("4.50")
    assert compute_shipping("eu", 5) == Decimal("15.50")
    assert compute_shipping("world", 3, express=True) == Decimal("48.00")


def test_legacy_errors():
    with pytest.raises(ShippingError):
        compute_shipping("mars", 1)
    with pytest.raises(ShippingError):
        compute_shipping("world", 6)


def test_rate_for():
    assert rate_for("domestic", 2) == Decimal("7.90")


def test_express_surcharge_minimum():
    assert express_surcharge(Decimal("4.50")) == Decimal("5.00")
