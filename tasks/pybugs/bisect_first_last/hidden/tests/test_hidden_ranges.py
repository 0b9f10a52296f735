from search import count_between, find_first, find_range


def test_empty_and_too_large():
    assert find_first([], 1) == -1
    assert find_first([1, 2], 9) == -1
    assert find_range([], 0) == (-1, -1)


def test_count_inclusive():
    assert count_between([1, 2, 3, 4, 5], 2, 4) == 3
    assert count_between([1, 1, 1], 1, 1) == 3


def test_single():
    assert find_range([7], 7) == (0, 0)
