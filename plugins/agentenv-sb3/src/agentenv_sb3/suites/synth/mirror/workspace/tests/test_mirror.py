from prog import f


def test_mirror_0():
    assert f('ab', '') == 'abba'


def test_mirror_1():
    assert f('x', 'y') == 'xx'


def test_mirror_2():
    assert f('', '') == ''


def test_mirror_3():
    assert f('abc', 'q') == 'abccba'
