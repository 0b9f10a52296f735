import pytest

from money_split import format_amount, parse_amount, split_by_weights, split_evenly


@pytest.mark.parametrize("text, cents", [("0", 0), ("12", 1200), ("12.5", 1250), ("12.05", 1205), ("1,234.56", 123456),
                                         ("1234.56", 123456), ("-3.10", -310), (" 7 ", 700), ("1,000,000", 100000000),
                                         ("999", 99900)])
def test_parse_amount(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize("bad", ["", "1.234", "12,34", "1,2345.00", "abc", "--1", "1.", ".5", "1,00"])
def test_parse_amount_rejects(bad):
    with pytest.raises(ValueError):
        parse_amount(bad)


def test_format_amount():
    assert format_amount(0) == "$0.00"
    assert format_amount(5) == "$0.05"
    assert format_amount(123456) == "$1,234.56"
    assert format_amount(-310) == "-$3.10"
    assert format_amount(100000000, symbol="€") == "€1,000,000.00"
    assert format_amount(-1) == "-$0.01"


def test_split_evenly():
    assert split_evenly(10000, 3) == [3334, 3333, 3333]
    assert split_evenly(9, 3) == [3, 3, 3]
    assert split_evenly(2, 3) == [1, 1, 0]
    assert split_evenly(-100, 3) == [-34, -33, -33]
    assert split_evenly(5, 1) == [5]
    for bad in (0, -2):
        with pytest.raises(ValueError):
            split_evenly(100, bad)


def test_split_by_weights():
    assert split_by_weights(100, [1, 1, 1]) == [34, 33, 33]
    assert split_by_weights(100, [1, 2]) == [33, 67]
    assert split_by_weights(1000, [50, 30, 20]) == [500, 300, 200]
    assert split_by_weights(10, [0, 1]) == [0, 10]
    assert split_by_weights(7, [3, 3, 1]) == [3, 3, 1]
    assert split_by_weights(5, [1, 1, 1, 1]) == [2, 1, 1, 1]
    assert sum(split_by_weights(12345, [3, 7, 11, 13])) == 12345


def test_split_by_weights_ties_go_to_the_first():
    assert split_by_weights(1, [1, 1]) == [1, 0]
    assert split_by_weights(2, [1, 1, 1]) == [1, 1, 0]


@pytest.mark.parametrize("weights", [[], [0, 0], [1, -1], [-1, 3]])
def test_split_by_weights_rejects(weights):
    with pytest.raises(ValueError):
        split_by_weights(100, weights)
