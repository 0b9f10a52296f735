import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    ('abc', 'x', 3),
    ('', 'yy', 0),
    ('hello', '', 5),
    ('a', 'bcd', 1),
    ('xy', 'xy', 2),
    ('abcd', 'ab', 4),
    ('', '', 0),
    ('qq', 'r', 2),
])
def test_length(a, b, expected):
    assert f(a, b) == expected
