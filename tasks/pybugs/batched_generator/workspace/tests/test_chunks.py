import itertools

import pytest
from streamtools import batched, sum_batches


def test_even():
    assert list(batched([1, 2, 3, 4], 2)) == [(1, 2), (3, 4)]


def test_short_last():
    assert list(batched(range(5), 2)) == [(0, 1), (2, 3), (4,)]


def test_generator():
    assert sum_batches((x for x in range(6)), 3) == [3, 12]


def test_bad_n():
    with pytest.raises(ValueError):
        list(batched([1], 0))
