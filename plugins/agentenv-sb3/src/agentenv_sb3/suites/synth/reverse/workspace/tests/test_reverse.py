from prog import f


def test_reverse_0():
    assert f('abc', 'x') == 'cba'


def test_reverse_1():
    assert f('ab', '') == 'ba'


def test_reverse_2():
    assert f('', 'q') == ''


def test_reverse_3():
    assert f('xyz', 'z') == 'zyx'
