from prog import f


def test_len_sum_0():
    assert f('ab', 'c') == 3


def test_len_sum_1():
    assert f('', '') == 0


def test_len_sum_2():
    assert f('x', 'yyyy') == 5


def test_len_sum_3():
    assert f('hello', '') == 5
