import pytest
from numerals import RomanError, from_roman, to_roman


def test_parse_subtractive():
    assert from_roman("MCMXCIV") == 1994 and from_roman("XLIX") == 49


def test_roundtrip():
    for n in range(1, 4000):
        assert from_roman(to_roman(n)) == n


def test_malformed():
    for bad in ("IIII", "VV", "IC", "", "ABC"):
        with pytest.raises(RomanError):
            from_roman(bad)
