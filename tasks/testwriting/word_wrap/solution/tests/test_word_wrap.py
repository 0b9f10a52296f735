import pytest

from word_wrap import fill, justify, wrap


def test_wrap_greedy():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]
    assert wrap("the quick brown fox", 9) == ["the quick", "brown fox"]
    assert wrap("the quick brown fox", 8) == ["the", "quick", "brown", "fox"]
    assert wrap("a b c d", 3) == ["a b", "c d"]
    assert wrap("one", 3) == ["one"]
    assert wrap("", 5) == [] and wrap("   ", 5) == []
    assert wrap("  spaced   out\n words ", 20) == ["spaced out words"]


def test_width_is_inclusive():
    assert wrap("abc de", 6) == ["abc de"]
    assert wrap("abc de", 5) == ["abc", "de"]


def test_long_words():
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap("x abcdefgh y", 4) == ["x", "abcd", "efgh", "y"]
    assert wrap("ab abcdefgh", 4) == ["ab", "abcd", "efgh"]
    assert wrap("abcd", 4) == ["abcd"]
    assert wrap("x abcdefgh y", 4, break_long_words=False) == ["x", "abcdefgh", "y"]
    with pytest.raises(ValueError):
        wrap("a", 0)


def test_fill_with_indent():
    assert fill("the quick brown fox", 12, indent="> ") == "> the quick\n> brown fox"
    assert fill("a b", 5) == "a b"
    assert fill("abcdef", 5, indent="  ", break_long_words=False) == "  abcdef"
    with pytest.raises(ValueError):
        fill("a", 2, indent="--")


def test_justify():
    assert justify("a b c", 9) == "a   b   c"
    assert justify("a b c", 8) == "a   b  c"
    assert justify("ab cd", 5) == "ab cd"
    assert justify("single", 10) == "single"
    assert justify("too long line", 5) == "too long line"
    assert justify("a b", 3) == "a b"
    assert justify("x yy zzz", 12) == "x   yy   zzz"
