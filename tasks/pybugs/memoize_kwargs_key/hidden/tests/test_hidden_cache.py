from pricing import memoize


def test_kwarg_order_irrelevant():
    calls = []

    @memoize
    def f(a=0, b=0):
        calls.append(1)
        return a - b

    assert f(a=5, b=2) == 3
    assert f(b=2, a=5) == 3
    assert len(calls) == 1
    assert f(a=2, b=5) == -3


def test_clear_resets_stats():
    @memoize
    def g(x):
        return x
    g(1); g(1)
    g.cache_clear()
    assert g.cache_info() == {"hits": 0, "misses": 0, "size": 0}
