from search import count_between, find_first, find_range


def test_first():
    assert find_first([1, 2, 2, 3], 2) == 1


def test_range_middle():
    assert find_range([1, 2, 2, 2, 5, 6], 2) == (1, 3)


def test_range_at_end():
    assert find_range([1, 4, 4], 4) == (1, 2)


def test_missing():
    assert find_first([1, 3], 2) == -1
