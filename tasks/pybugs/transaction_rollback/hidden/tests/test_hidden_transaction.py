import pytest
from kvstore import KeyValueStore


def test_nested_values_restored():
    s = KeyValueStore()
    s.set("l", [1])
    with pytest.raises(RuntimeError):
        with s.transaction() as t:
            t.get("l").append(2)
            raise RuntimeError()
    assert s.get("l") == [1] and s.rollbacks == 1 and s.commits == 0


def test_usable_after_rollback():
    s = KeyValueStore()
    with pytest.raises(ZeroDivisionError):
        with s.transaction():
            1 / 0
    with s.transaction() as t:
        t.set("ok", True)
    assert s.data == {"ok": True} and s.commits == 1
