import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (0, 0, 1),
    (1, 2, 4),
    (-1, 5, 5),
    (4, -1, 4),
    (2, -3, 0),
    (0, 9, 10),
    (-1, 0, 0),
    (10, 10, 21),
])
def test_sum_plus_one(a, b, expected):
    assert f(a, b) == expected
