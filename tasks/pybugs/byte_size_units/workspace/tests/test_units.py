import pytest
from diskquota import Quota, UnitError, format_size, parse_size


def test_plain_bytes():
    assert parse_size("42") == 42


def test_decimal_units():
    assert parse_size("1.5 GB") == 1_500_000_000


def test_binary_units():
    assert parse_size("1KiB") == 1024
    assert parse_size("2 MiB") == 2 * 1024 * 1024


def test_format():
    assert format_size(1536, binary=True) == "1.5 KiB"
    assert format_size(999) == "999 B"


def test_unknown_unit():
    with pytest.raises(UnitError):
        parse_size("3 parsecs")


def test_quota():
    q = Quota.from_text("1 kB")
    assert q.would_exceed("1001")
