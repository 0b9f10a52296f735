from words import count_words


def test_words_simple():
    assert count_words('a b a') == {'a': 2, 'b': 1}


def test_words_case():
    assert count_words('Go go GO') == {'go': 3}


def test_words_blank():
    assert count_words('') == {}
