from kvcache import LRUCache


def test_basic():
    c = LRUCache(2)
    c.put("a", 1)
    assert c.get("a") == 1 and c.get("zz") is None


def test_evicts_oldest():
    c = LRUCache(2)
    c.put("a", 1); c.put("b", 2); c.put("c", 3)
    assert "a" not in c and c.keys() == ["b", "c"]


def test_get_refreshes():
    c = LRUCache(2)
    c.put("a", 1); c.put("b", 2)
    c.get("a")
    c.put("c", 3)
    assert "a" in c and "b" not in c


def test_hit_rate():
    c = LRUCache(1)
    c.put("a", 1); c.get("a"); c.get("b")
    assert c.stats.hit_rate == 0.5
