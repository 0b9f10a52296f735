from prog import f


def test_length_0():
    assert f('abc', 'x') == 3


def test_length_1():
    assert f('', 'yy') == 0


def test_length_2():
    assert f('hello', '') == 5


def test_length_3():
    assert f('zz', 'a') == 2
