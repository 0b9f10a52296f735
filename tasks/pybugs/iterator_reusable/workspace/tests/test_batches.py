import pytest
from dataset import Batches


def test_single_pass():
    assert list(Batches([1, 2, 3, 4], 2)) == [[1, 2], [3, 4]]


def test_partial_last():
    assert list(Batches([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]


def test_two_epochs():
    b = Batches(list(range(6)), 4)
    assert list(b) == [[0, 1, 2, 3], [4, 5]]
    assert list(b) == [[0, 1, 2, 3], [4, 5]]


def test_drop_last():
    assert list(Batches([1, 2, 3], 2, drop_last=True)) == [[1, 2]]


def test_bad_size():
    with pytest.raises(ValueError):
        Batches([1], 0)
