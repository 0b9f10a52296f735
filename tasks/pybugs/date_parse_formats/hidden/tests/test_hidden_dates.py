from datetime import date

import pytest
from reports import InvalidDate, parse_date, parse_range


def test_european_day_over_12():
    assert parse_date("25/12/2023") == date(2023, 12, 25)


def test_feb_30_rejected():
    with pytest.raises(InvalidDate):
        parse_date("30/02/2024")


def test_leap_day():
    assert parse_date("29/02/2024") == date(2024, 2, 29)


def test_mixed_range():
    assert parse_range("01/02/2024..2024-02-10") == (date(2024, 2, 1), date(2024, 2, 10))
