from prog import f


def test_is_even_0():
    assert f(2, 0) == True


def test_is_even_1():
    assert f(3, 0) == False


def test_is_even_2():
    assert f(0, 1) == True


def test_is_even_3():
    assert f(7, 7) == False
