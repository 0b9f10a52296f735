from stats import bin_edges, histogram


def test_edges():
    assert bin_edges(0, 10, 2) == [0, 5, 10]


def test_interior():
    assert histogram([0, 1, 2, 3, 3.9], 2)[0][0] == 2


def test_max_in_last_bin():
    counts, _ = histogram([0, 5, 10], 2)
    assert counts == [1, 2]


def test_empty():
    assert histogram([], 3) == ([0, 0, 0], [])
