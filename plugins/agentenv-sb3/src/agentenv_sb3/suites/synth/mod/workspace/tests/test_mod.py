from prog import f


def test_mod_0():
    assert f(7, 3) == 1


def test_mod_1():
    assert f(9, 4) == 1


def test_mod_2():
    assert f(8, 5) == 3


def test_mod_3():
    assert f(6, 7) == 6
