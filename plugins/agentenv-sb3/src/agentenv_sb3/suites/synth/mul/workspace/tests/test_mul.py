import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (3, 1, 3),
    (1, 7, 7),
    (0, 5, 0),
    (4, 4, 16),
    (2, -3, -6),
    (6, 1, 6),
    (0, 0, 0),
    (-1, 1, -1),
])
def test_mul(a, b, expected):
    assert f(a, b) == expected
