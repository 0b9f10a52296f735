import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize("text, seconds", [("90", 90), ("90s", 90), ("1m", 60), ("1h30m", 5400), ("1h 30m", 5400),
                                           ("2d 4h", 187200), ("1w", 604800), ("1W 1D", 691200), (" 5 m ", 300),
                                           ("1h 0m 1s", 3601), ("0s", 0), ("0", 0)])
def test_parse(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "  ", "5x", "1h 2h", "30m 1h", "h", "1h30", "abc", "1h and 5m", "m5"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_parse_errors_say_why():
    with pytest.raises(ValueError, match="out of order"):
        parse_duration("5s 1m")
    with pytest.raises(ValueError, match="unexpected 'and'"):
        parse_duration("1h and 5m")
    with pytest.raises(ValueError, match="empty"):
        parse_duration(" ")


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (1, "1s"), (59, "59s"), (60, "1m"), (61, "1m 1s"),
                                           (3600, "1h"), (5400, "1h 30m"), (5401, "1h 30m"), (86400, "1d"),
                                           (90061, "1d 1h"), (604800, "1w"), (694861, "1w 1d")])
def test_format(seconds, text):
    assert format_duration(seconds) == text


def test_format_units():
    assert format_duration(90061, max_units=4) == "1d 1h 1m 1s"
    assert format_duration(90061, max_units=1) == "1d"
    assert format_duration(3601, max_units=3) == "1h 1s"
    with pytest.raises(ValueError):
        format_duration(-1)


def test_round_trip():
    for seconds in (1, 59, 3600, 3661, 86399, 1209600 + 5):
        assert parse_duration(format_duration(seconds, max_units=5)) == seconds
