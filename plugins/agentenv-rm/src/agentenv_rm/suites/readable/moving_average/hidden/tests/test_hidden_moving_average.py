import pytest

from moving_average import moving_average


def test_floats_and_a_window_of_one():
    assert moving_average([0.5, 1.5, -2.0], 1) == [0.5, 1.5, -2.0]


def test_negative_window():
    with pytest.raises(ValueError):
        moving_average([1, 2, 3], -2)


def test_the_values_are_left_alone():
    values = [3, 1, 2]
    moving_average(values, 2)
    assert values == [3, 1, 2]
