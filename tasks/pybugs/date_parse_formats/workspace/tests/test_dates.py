from datetime import date

import pytest
from reports import InvalidDate, parse_date, parse_range


def test_iso():
    assert parse_date("2024-04-03") == date(2024, 4, 3)


def test_compact():
    assert parse_date("20240403") == date(2024, 4, 3)


def test_european():
    assert parse_date("03/04/2024") == date(2024, 4, 3)


def test_garbage():
    with pytest.raises(InvalidDate):
        parse_date("yesterday")


def test_range():
    assert parse_range("2024-01-01..2024-01-31")[1] == date(2024, 1, 31)
