import pytest
from jobs import DurationError, format_duration, parse_duration


def test_seconds():
    assert parse_duration("45s") == 45


def test_hours_minutes():
    assert parse_duration("1h30m") == 5400


def test_format():
    assert format_duration(5400) == "1h30m" and format_duration(0) == "0s"


def test_garbage():
    with pytest.raises(DurationError):
        parse_duration("soon")
