from typeset import justify, wrap_text


def test_long_word_split():
    assert wrap_text("a supercalifragilistic b", 6) == ["a", "superc", "alifra", "gilist", "ic b"]


def test_justify():
    assert justify("aa bb cc dd", 7) == ["aa   bb", "cc dd"]


def test_boundary():
    assert wrap_text("abc def", 7) == ["abc def"]
    assert wrap_text("abc defg", 7) == ["abc", "defg"]
