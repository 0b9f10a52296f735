from prog import f


def test_add_0():
    assert f(0, 5) == 5


def test_add_1():
    assert f(3, 0) == 3


def test_add_2():
    assert f(2, 2) == 4


def test_add_3():
    assert f(7, -3) == 4
