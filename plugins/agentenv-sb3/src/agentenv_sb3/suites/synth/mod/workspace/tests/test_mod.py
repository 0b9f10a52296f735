import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (2, 5, 2),
    (7, 3, 1),
    (9, 9, 0),
    (4, 2, 0),
    (1, 4, 1),
    (10, 3, 1),
    (3, 7, 3),
    (8, 5, 3),
])
def test_mod(a, b, expected):
    assert f(a, b) == expected
