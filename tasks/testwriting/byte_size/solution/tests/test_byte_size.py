import pytest

from byte_size import format_size, parse_size


@pytest.mark.parametrize("text, n", [("0", 0), ("512", 512), ("512b", 512), ("1k", 1000), ("1kB", 1000),
                                     ("1KiB", 1024), ("1.5 KiB", 1536), ("10MB", 10_000_000), ("2 MiB", 2097152),
                                     ("1.5GiB", 1610612736), ("3g", 3_000_000_000), ("1 TB", 10 ** 12),
                                     ("1TiB", 1024 ** 4), (" 7 m ", 7_000_000), ("0.5k", 500), ("2.25 kib", 2304),
                                     ("1.000", 1)])
def test_parse(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize("bad", ["", "abc", "-1", "1.2.3", "1 XB", "1.5", "0.3 KiB", "1,5k", "k"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_parse_messages():
    with pytest.raises(ValueError, match="unknown unit 'XB'"):
        parse_size("1 XB")
    with pytest.raises(ValueError, match="whole number of bytes"):
        parse_size("1.5")


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
                                     (1048576, "1 MiB"), (1610612736, "1.5 GiB"), (1024 ** 4, "1 TiB"),
                                     (1024 ** 5, "1 PiB"), (1024 ** 6, "1024 PiB"), (1100, "1.1 KiB")])
def test_format_binary(n, text):
    assert format_size(n) == text


def test_format_decimal_and_precision():
    assert format_size(999, binary=False) == "999 B"
    assert format_size(1000, binary=False) == "1 kB"
    assert format_size(1_500_000, binary=False) == "1.5 MB"
    assert format_size(1_234_567, binary=False, precision=2) == "1.23 MB"
    assert format_size(1_234_567, binary=False, precision=0) == "1 MB"
    assert format_size(1_999_999, binary=False, precision=0) == "2 MB"
    assert format_size(1_050_000, binary=False, precision=1) == "1.1 MB"
    with pytest.raises(ValueError):
        format_size(-1)


def test_round_trip_binary():
    for n in (1024, 1536, 1048576, 3 * 1024 ** 3):
        assert parse_size(format_size(n)) == n
