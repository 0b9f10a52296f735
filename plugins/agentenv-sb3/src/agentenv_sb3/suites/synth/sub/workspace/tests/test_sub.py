from prog import f


def test_sub_0():
    assert f(5, 0) == 5


def test_sub_1():
    assert f(0, 3) == -3


def test_sub_2():
    assert f(9, 4) == 5


def test_sub_3():
    assert f(2, 2) == 0
