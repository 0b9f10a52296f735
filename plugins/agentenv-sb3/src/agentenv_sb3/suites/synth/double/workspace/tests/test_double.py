import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (0, 1, 0),
    (1, 9, 2),
    (3, 3, 6),
    (5, 0, 10),
    (-2, 4, -4),
    (4, 4, 8),
    (10, 1, 20),
    (0, 0, 0),
])
def test_double(a, b, expected):
    assert f(a, b) == expected
