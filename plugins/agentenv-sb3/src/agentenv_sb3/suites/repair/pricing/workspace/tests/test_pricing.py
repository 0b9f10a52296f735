from discount import discount
from tax import tax
from pricing import total


def test_discount_ten():
    assert round(discount(100), 2) == 90


def test_tax_twenty():
    assert round(tax(100), 2) == 120


def test_total_both():
    assert total(100) == 108
