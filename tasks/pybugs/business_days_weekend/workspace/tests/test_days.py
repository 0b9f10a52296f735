from datetime import date

from workcal import add_business_days, is_business_day


def test_midweek():
    assert add_business_days(date(2024, 3, 5), 2) == date(2024, 3, 7)


def test_over_weekend():
    assert add_business_days(date(2024, 3, 8), 1) == date(2024, 3, 11)


def test_zero():
    assert add_business_days(date(2024, 3, 9), 0) == date(2024, 3, 9)


def test_is_business_day():
    assert not is_business_day(date(2024, 3, 10))
