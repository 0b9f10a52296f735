import itertools

from streamtools import batched


def test_infinite():
    assert list(itertools.islice(batched(itertools.count(), 3), 2)) == [(0, 1, 2), (3, 4, 5)]


def test_empty():
    assert list(batched([], 4)) == []


def test_n_larger_than_input():
    assert list(batched("ab", 5)) == [("a", "b")]
