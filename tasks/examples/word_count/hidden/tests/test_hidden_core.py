from wordcount import top_words


def test_ties_alphabetical():
    assert top_words("b a c", 3) == [("a", 1), ("b", 1), ("c", 1)]


def test_apostrophes_kept():
    assert top_words("don't Don't stop", 1) == [("don't", 2)]
