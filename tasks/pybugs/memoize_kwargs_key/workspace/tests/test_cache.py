from pricing import memoize, quote


def test_positional_cached():
    calls = []

    @memoize
    def sq(x):
        calls.append(x)
        return x * x

    assert sq(3) == 9 and sq(3) == 9
    assert calls == [3]
    assert sq.cache_info()["hits"] == 1


def test_kwargs_distinguished():
    assert quote("A", currency="USD") == 100
    assert quote("A", currency="EUR") == 50


def test_wraps_metadata():
    assert quote.__name__ == "quote"
    assert "units" in quote.__doc__


def test_size():
    @memoize
    def f(x):
        return x
    f(1); f(2); f(1)
    assert f.cache_info()["size"] == 2
