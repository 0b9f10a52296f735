from prog import f


def test_square_plus_0():
    assert f(0, 1) == 1


def test_square_plus_1():
    assert f(2, 0) == 4


def test_square_plus_2():
    assert f(3, 1) == 10


def test_square_plus_3():
    assert f(1, 1) == 2
