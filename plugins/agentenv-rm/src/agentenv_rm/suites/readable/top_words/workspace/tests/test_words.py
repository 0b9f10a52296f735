from words import top_words


def test_counts_words_case_insensitively():
    assert top_words("The cat and the hat", 1) == [("the", 2)]


def test_ties_are_broken_alphabetically():
    assert top_words("pear apple pear apple fig", 3) == [("apple", 2), ("pear", 2), ("fig", 1)]


def test_punctuation_is_not_part_of_a_word():
    assert top_words("Stop. Stop, stop!", 1) == [("stop", 3)]


def test_empty_text():
    assert top_words("", 5) == []
