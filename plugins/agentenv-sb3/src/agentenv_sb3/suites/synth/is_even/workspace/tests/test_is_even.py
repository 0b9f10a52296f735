import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    (2, 0, True),
    (3, 0, False),
    (0, 1, True),
    (7, 7, False),
    (4, 9, True),
    (9, 2, False),
    (6, 6, True),
    (11, 1, False),
])
def test_is_even(a, b, expected):
    assert f(a, b) == expected
