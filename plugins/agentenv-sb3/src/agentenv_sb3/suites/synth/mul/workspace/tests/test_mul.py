from prog import f


def test_mul_0():
    assert f(3, 1) == 3


def test_mul_1():
    assert f(0, 7) == 0


def test_mul_2():
    assert f(4, 5) == 20


def test_mul_3():
    assert f(2, 2) == 4
