from words import top_words


def test_apostrophes_stay_inside_words():
    assert top_words("don't stop, don't", 1) == [("don't", 2)]


def test_n_larger_than_the_vocabulary():
    assert top_words("b a", 10) == [("a", 1), ("b", 1)]


def test_numbers_count_as_words():
    assert top_words("1 2 2", 1) == [("2", 2)]
