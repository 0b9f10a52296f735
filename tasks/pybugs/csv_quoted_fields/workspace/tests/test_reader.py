from decimal import Decimal

import pytest
from ledger import read_transactions, split_row, total

CSV = """date,description,amount
2024-01-02,Rent,-900.00
2024-01-03,"Coffee, large",-3.50

2024-01-04,Salary,2500
"""


def test_simple_split():
    assert split_row("a,b,c") == ["a", "b", "c"]


def test_quoted_comma():
    assert split_row('x,"Coffee, large",1') == ["x", "Coffee, large", "1"]


def test_read_and_total():
    txs = read_transactions(CSV.splitlines())
    assert len(txs) == 3
    assert total(txs) == Decimal("1596.50")


def test_bad_row():
    with pytest.raises(ValueError, match="line 2"):
        read_transactions(["h,h,h", "only,two"])
