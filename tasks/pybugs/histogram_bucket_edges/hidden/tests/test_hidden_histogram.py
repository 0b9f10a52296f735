from stats import histogram


def test_constant_values():
    assert histogram([7, 7, 7], 3)[0] == [3, 0, 0]


def test_total():
    vals = [i * 0.37 for i in range(100)]
    counts, edges = histogram(vals, 7)
    assert sum(counts) == 100 and len(edges) == 8
