import pytest
from typeset import justify, wrap_text


def test_simple():
    assert wrap_text("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_exact_fit_not_exceeded():
    for line in wrap_text("aaaa bbbb cccc dddd", 8):
        assert len(line) <= 8


def test_bad_width():
    with pytest.raises(ValueError):
        wrap_text("x", 0)


def test_empty():
    assert wrap_text("   ", 5) == []
