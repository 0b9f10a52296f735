import pytest

from roman import chapter_label, from_roman, to_roman


@pytest.mark.parametrize("n, text", [(1, "I"), (3, "III"), (4, "IV"), (5, "V"), (9, "IX"), (14, "XIV"), (40, "XL"),
                                     (44, "XLIV"), (90, "XC"), (400, "CD"), (900, "CM"), (1994, "MCMXCIV"),
                                     (2024, "MMXXIV"), (3999, "MMMCMXCIX"), (3888, "MMMDCCCLXXXVIII")])
def test_both_ways(n, text):
    assert to_roman(n) == text
    assert from_roman(text) == n
    assert from_roman(text.lower()) == n


def test_to_roman_range_and_type():
    for bad in (0, -1, 4000):
        with pytest.raises(ValueError, match="out of range"):
            to_roman(bad)
    for bad in (1.0, "4", True, None):
        with pytest.raises(TypeError):
            to_roman(bad)


@pytest.mark.parametrize("bad", ["", "IIII", "VV", "IC", "IM", "XM", "MMMM", "ABC", "IIV", "VX", "LC", "I I"])
def test_from_roman_refuses_non_standard(bad):
    with pytest.raises(ValueError):
        from_roman(bad)


def test_from_roman_strips():
    assert from_roman("  xiv ") == 14


def test_every_number_round_trips():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 4000))


def test_chapter_label():
    assert chapter_label(12) == "XII"
    assert chapter_label(12, "lower") == "xii"
    with pytest.raises(ValueError):
        chapter_label(12, "title")
