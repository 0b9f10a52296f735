from decimal import Decimal as D

from billing import split_amount, split_by_weights


def test_sums_always_match():
    for total in ("0.05", "1.00", "99.99", "1234.57"):
        for ways in range(1, 8):
            assert sum(split_amount(total, ways)) == D(total)


def test_weights_sum_exact():
    parts = split_by_weights("0.10", [1, 1, 1])
    assert parts == [D("0.04"), D("0.03"), D("0.03")]
    assert sum(split_by_weights("100.00", [3, 3, 3, 1])) == D("100.00")


def test_zero_weight():
    assert split_by_weights("5.00", [0, 1]) == [D("0.00"), D("5.00")]
