import pytest

from prog import f


@pytest.mark.parametrize("a, b, expected", [
    ('ab', 'c', 3),
    ('', '', 0),
    ('x', 'yyyy', 5),
    ('hello', '', 5),
    ('', 'abc', 3),
    ('aa', 'bb', 4),
    ('q', 'r', 2),
    ('abc', 'de', 5),
])
def test_len_sum(a, b, expected):
    assert f(a, b) == expected
