import pytest
from calc import LexError, Token, evaluate, tokenize


def test_single_digits():
    assert [t.value for t in tokenize("1 + 2")] == ["1", "+", "2"]


def test_multi_digit():
    assert tokenize("12+3") == [Token("NUMBER", "12", 0), Token("OP", "+", 2), Token("NUMBER", "3", 3)]


def test_evaluate():
    assert evaluate("2 * (3 + 4)") == 14
    assert evaluate("12*2") == 24


def test_bad_char():
    with pytest.raises(LexError):
        tokenize("1 $ 2")
