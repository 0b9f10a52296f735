from stats import mean


def test_mean_float():
    assert mean([1, 2]) == 1.5


def test_mean_ints():
    assert mean([2, 4, 6]) == 4


def test_mean_empty():
    assert mean([]) == 0.0
