from prog import f


def test_double_0():
    assert f(0, 1) == 0


def test_double_1():
    assert f(1, 9) == 2


def test_double_2():
    assert f(3, 3) == 6


def test_double_3():
    assert f(5, 0) == 10
