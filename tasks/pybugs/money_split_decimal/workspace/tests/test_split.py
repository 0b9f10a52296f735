from decimal import Decimal as D

import pytest
from billing import round_money, split_amount, split_by_weights


def test_even():
    assert split_amount("90.00", 3) == [D("30.00")] * 3


def test_uneven_sums():
    parts = split_amount("100.00", 3)
    assert parts == [D("33.34"), D("33.33"), D("33.33")]


def test_round_half_up():
    assert round_money("2.675") == D("2.68")
    assert round_money(1.005) == D("1.01")


def test_bad_ways():
    with pytest.raises(ValueError):
        split_amount("1", 0)


def test_weights_simple():
    assert split_by_weights("10.00", [1, 1, 2]) == [D("2.50"), D("2.50"), D("5.00")]
