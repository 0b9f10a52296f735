import pytest

from lru_cache import LRUCache


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        LRUCache(0)
    assert LRUCache(1).capacity == 1
    with pytest.raises(ValueError):
        LRUCache(2).resize(0)


def test_get_put_and_stats():
    c = LRUCache(2)
    assert c.get("a") is None and c.get("a", 5) == 5
    c.put("a", 1)
    assert c.get("a") == 1 and "a" in c and "b" not in c and len(c) == 1
    assert (c.hits, c.misses) == (1, 2)
    assert c.hit_rate() == pytest.approx(1 / 3)
    assert LRUCache(3).hit_rate() == 0.0


def test_stored_falsy_values_are_hits():
    c = LRUCache(2)
    c.put("z", None)
    c.put("o", 0)
    assert c.get("z", "dflt") is None and c.get("o", 7) == 0
    assert (c.hits, c.misses) == (2, 0)


def test_eviction_order_is_least_recently_used():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.get("a")
    c.put("c", 3)
    assert c.keys() == ["a", "c"] and c.evictions == 1
    c.put("a", 10)  # an update refreshes recency and does not evict
    c.put("d", 4)
    assert c.keys() == ["a", "d"] and c.get("a") == 10 and c.evictions == 2


def test_update_does_not_grow():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("a", 2)
    assert len(c) == 1 and c.evictions == 0 and c.keys() == ["a"]
    c.put("b", 1)
    c.put("a", 3)
    assert c.keys() == ["b", "a"]


def test_pop_and_resize():
    c = LRUCache(3)
    for k in "abc":
        c.put(k, k.upper())
    assert c.pop("b") == "B" and c.pop("b", "gone") == "gone" and len(c) == 2
    c.put("d", "D")
    c.resize(1)
    assert c.keys() == ["d"] and c.capacity == 1 and c.evictions == 2
    c.resize(5)
    assert c.keys() == ["d"] and c.evictions == 2
    c.put("e", 1)
    assert c.keys() == ["d", "e"]
