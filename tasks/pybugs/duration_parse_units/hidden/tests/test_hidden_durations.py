import pytest
from jobs import DurationError, format_duration, parse_duration


def test_days():
    assert parse_duration("2d") == 172800


def test_round_trip():
    for s in (1, 59, 61, 3600, 90061, 200000):
        assert parse_duration(format_duration(s)) == s


def test_out_of_order():
    with pytest.raises(DurationError):
        parse_duration("30m1h")
