import pytest

from moving_average import moving_average


def test_window_of_two():
    assert moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]


def test_window_as_long_as_the_values():
    assert moving_average([2, 4, 6], 3) == [4.0]


def test_window_longer_than_the_values():
    assert moving_average([1, 2], 3) == []


def test_a_window_must_be_positive():
    with pytest.raises(ValueError):
        moving_average([1, 2, 3], 0)
