import pytest
from numerals import RomanError, from_roman, to_roman


def test_additive():
    assert to_roman(3) == "III" and to_roman(2023) == "MMXXIII"


def test_subtractive():
    assert to_roman(4) == "IV" and to_roman(1994) == "MCMXCIV"


def test_range():
    with pytest.raises(RomanError):
        to_roman(0)
    with pytest.raises(RomanError):
        to_roman(4000)


def test_parse_simple():
    assert from_roman("xii") == 12
