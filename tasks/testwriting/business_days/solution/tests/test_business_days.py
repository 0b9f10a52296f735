import datetime as dt

from business_days import add_business_days, business_days_between, delivery_date, is_business_day

D = dt.date
MON, FRI, SAT, SUN = D(2024, 3, 4), D(2024, 3, 8), D(2024, 3, 9), D(2024, 3, 10)
EASTER_MONDAY = D(2024, 4, 1)


def test_is_business_day():
    assert is_business_day(MON) and is_business_day(FRI)
    assert not is_business_day(SAT) and not is_business_day(SUN)
    assert not is_business_day(MON, holidays={MON})


def test_add_forward():
    assert add_business_days(MON, 1) == D(2024, 3, 5)
    assert add_business_days(MON, 4) == FRI
    assert add_business_days(MON, 5) == D(2024, 3, 11)
    assert add_business_days(FRI, 1) == D(2024, 3, 11)
    assert add_business_days(SAT, 1) == D(2024, 3, 11)
    assert add_business_days(D(2024, 3, 29), 1, holidays={EASTER_MONDAY}) == D(2024, 4, 2)


def test_add_backward_and_zero():
    assert add_business_days(MON, -1) == D(2024, 3, 1)
    assert add_business_days(D(2024, 3, 12), -2) == D(2024, 3, 8)
    assert add_business_days(SUN, -1) == FRI
    assert add_business_days(MON, 0) == MON
    assert add_business_days(SAT, 0) == D(2024, 3, 11)
    assert add_business_days(FRI, 0, holidays={FRI}) == D(2024, 3, 11)


def test_between():
    assert business_days_between(MON, FRI) == 4
    assert business_days_between(MON, MON) == 0
    assert business_days_between(FRI, D(2024, 3, 11)) == 1
    assert business_days_between(FRI, SUN) == 0
    assert business_days_between(D(2024, 3, 11), FRI) == -1
    assert business_days_between(MON, D(2024, 3, 18)) == 10
    assert business_days_between(MON, D(2024, 3, 18), holidays={D(2024, 3, 12)}) == 9


def test_delivery_date():
    before = dt.datetime(2024, 3, 4, 13, 59)
    after = dt.datetime(2024, 3, 4, 14, 0)
    assert delivery_date(before, 2) == D(2024, 3, 6)
    assert delivery_date(after, 2) == D(2024, 3, 7)
    assert delivery_date(dt.datetime(2024, 3, 9, 9, 0), 1) == D(2024, 3, 12)
    assert delivery_date(dt.datetime(2024, 3, 8, 16, 0), 1) == D(2024, 3, 12)
    assert delivery_date(before, 2, cutoff_hour=12) == D(2024, 3, 7)
    assert delivery_date(before, 1, holidays={D(2024, 3, 5)}) == D(2024, 3, 6)
    assert delivery_date(dt.datetime(2024, 3, 5, 9, 0), 1, holidays={D(2024, 3, 5)}) == D(2024, 3, 7)
