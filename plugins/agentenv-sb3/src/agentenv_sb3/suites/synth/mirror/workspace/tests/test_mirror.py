import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    ('ab', 'z', 'abba'),
    ('', 'q', ''),
    ('x', '', 'xx'),
    ('abc', 'd', 'abccba'),
    ('aa', 'b', 'aaaa'),
    ('noon', 'x', 'noonnoon'),
    ('xy', '', 'xyyx'),
    ('q', 'w', 'qq'),
])
def test_mirror(a, b, expected):
    assert f(a, b) == expected
