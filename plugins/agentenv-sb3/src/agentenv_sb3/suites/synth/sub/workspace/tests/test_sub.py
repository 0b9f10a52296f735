import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (5, 0, 5),
    (9, 4, 5),
    (0, 0, 0),
    (3, 5, -2),
    (-2, 0, -2),
    (7, 7, 0),
    (1, -1, 2),
    (6, 0, 6),
])
def test_sub(a, b, expected):
    assert f(a, b) == expected
