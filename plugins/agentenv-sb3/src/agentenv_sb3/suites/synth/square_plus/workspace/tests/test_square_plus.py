import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (0, 3, 3),
    (1, 1, 2),
    (2, 0, 4),
    (3, -1, 8),
    (0, 0, 0),
    (-2, 5, 9),
    (4, 0, 16),
    (1, -1, 0),
])
def test_square_plus(a, b, expected):
    assert f(a, b) == expected
