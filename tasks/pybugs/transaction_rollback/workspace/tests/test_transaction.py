import pytest
from kvstore import KeyValueStore


def test_commit():
    s = KeyValueStore()
    with s.transaction() as t:
        t.set("a", 1)
    assert s.get("a") == 1 and s.commits == 1


def test_exception_propagates():
    s = KeyValueStore()
    with pytest.raises(ValueError):
        with s.transaction():
            raise ValueError("boom")


def test_rollback():
    s = KeyValueStore()
    s.set("a", 1)
    try:
        with s.transaction() as t:
            t.set("a", 2); t.set("b", 3)
            raise KeyError("x")
    except KeyError:
        pass
    assert s.data == {"a": 1}


def test_get_default():
    assert KeyValueStore().get("x", 0) == 0
