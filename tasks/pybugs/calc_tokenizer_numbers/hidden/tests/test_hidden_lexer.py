import pytest
from calc import LexError, evaluate, tokenize


def test_decimals():
    assert [t.value for t in tokenize("3.25*.5")] == ["3.25", "*", ".5"]
    assert evaluate("3.25 * 4") == 13


def test_column():
    with pytest.raises(LexError) as ei:
        tokenize("10 + x")
    assert ei.value.column == 5


def test_positions():
    assert [t.pos for t in tokenize(" 100 / 25")] == [1, 5, 7]
