import pytest

from cron_field import parse_field, parse_schedule


def test_star_and_steps():
    assert parse_field("*", "hour") == list(range(24))
    assert parse_field("*/15", "minute") == [0, 15, 30, 45]
    assert parse_field("*/10", "day") == [1, 11, 21, 31]
    assert parse_field("10/20", "minute") == [10, 30, 50]


def test_ranges_lists_and_names():
    assert parse_field("1-5", "weekday") == [1, 2, 3, 4, 5]
    assert parse_field("mon-fri", "weekday") == [1, 2, 3, 4, 5]
    assert parse_field("1-10/3", "day") == [1, 4, 7, 10]
    assert parse_field("1,15,30", "minute") == [1, 15, 30]
    assert parse_field("5,1,5", "minute") == [1, 5]
    assert parse_field("jan,JUL", "month") == [1, 7]
    assert parse_field("dec", "month") == [12]
    assert parse_field("sun", "weekday") == [0]
    assert parse_field("7", "weekday") == [0]
    assert parse_field("5-7", "weekday") == [0, 5, 6]
    assert parse_field("*", "weekday") == [0, 1, 2, 3, 4, 5, 6]
    assert parse_field("*/2", "weekday") == [0, 2, 4, 6]
    assert parse_field("0", "minute") == [0] and parse_field("59", "minute") == [59]
    assert parse_field("31", "day") == [31] and parse_field("1", "day") == [1]
    assert parse_field("12", "month") == [12]


@pytest.mark.parametrize("text, field, message", [
    ("60", "minute", "outside 0-59"), ("0", "day", "outside 1-31"), ("13", "month", "outside 1-12"),
    ("5-1", "hour", "runs backwards"), ("*/0", "minute", "bad step"), ("*/x", "minute", "bad step"),
    ("x", "hour", "not a number"), ("1-x", "hour", "not a number"), ("24", "hour", "outside 0-23"),
    ("mon", "month", "not a number"), ("", "minute", "not a number")])
def test_errors(text, field, message):
    with pytest.raises(ValueError, match=message):
        parse_field(text, field)


def test_unknown_field():
    with pytest.raises(ValueError, match="unknown field"):
        parse_field("*", "second")


def test_parse_schedule():
    s = parse_schedule("30 2 * * mon-fri")
    assert s == {"minute": [30], "hour": [2], "day": list(range(1, 32)), "month": list(range(1, 13)),
                 "weekday": [1, 2, 3, 4, 5]}
    with pytest.raises(ValueError, match="expected 5 fields, found 4"):
        parse_schedule("* * * *")
