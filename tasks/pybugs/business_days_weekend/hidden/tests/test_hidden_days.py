from datetime import date

from workcal import add_business_days


def test_holidays():
    hol = {date(2024, 12, 25), date(2024, 12, 26)}
    assert add_business_days(date(2024, 12, 24), 1, hol) == date(2024, 12, 27)


def test_backwards():
    assert add_business_days(date(2024, 3, 11), -1) == date(2024, 3, 8)


def test_two_weeks():
    assert add_business_days(date(2024, 3, 4), 10) == date(2024, 3, 18)
