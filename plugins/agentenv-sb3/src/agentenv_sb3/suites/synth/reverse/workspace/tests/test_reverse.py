import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    ('abc', 'x', 'cba'),
    ('', 'y', ''),
    ('ab', '', 'ba'),
    ('racecar', 'q', 'racecar'),
    ('xy', 'z', 'yx'),
    ('a', 'bb', 'a'),
    ('noon', '', 'noon'),
    ('hello', 'w', 'olleh'),
])
def test_reverse(a, b, expected):
    assert f(a, b) == expected
