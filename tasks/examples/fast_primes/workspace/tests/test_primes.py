from primes import primes_below


def test_small():
    assert primes_below(20) == [2, 3, 5, 7, 11, 13, 17, 19]


def test_edges():
    assert primes_below(0) == [] and primes_below(2) == [] and primes_below(3) == [2]


def test_large():
    ps = primes_below(3_000_000)
    assert len(ps) == 216816 and ps[-1] == 2999999
