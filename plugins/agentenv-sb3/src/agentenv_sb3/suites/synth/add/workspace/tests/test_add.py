import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (0, 5, 5),
    (3, 0, 3),
    (2, 2, 4),
    (7, -3, 4),
    (0, 0, 0),
    (-4, 0, -4),
    (1, 6, 7),
    (0, -2, -2),
])
def test_add(a, b, expected):
    assert f(a, b) == expected
