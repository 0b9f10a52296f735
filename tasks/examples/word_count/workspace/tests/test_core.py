from wordcount import top_words


def test_simple():
    assert top_words("a b a", 1) == [("a", 2)]


def test_case_insensitive():
    assert top_words("The cat and the hat", 1) == [("the", 2)]


def test_punctuation():
    assert top_words("stop. stop, go!", 2) == [("stop", 2), ("go", 1)]
