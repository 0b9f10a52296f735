from prog import f


def test_sum_plus_one_0():
    assert f(0, 0) == 1


def test_sum_plus_one_1():
    assert f(2, 3) == 6


def test_sum_plus_one_2():
    assert f(1, 0) == 2


def test_sum_plus_one_3():
    assert f(4, 4) == 9
