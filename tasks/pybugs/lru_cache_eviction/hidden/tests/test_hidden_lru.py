from kvcache import LRUCache


def test_update_does_not_evict():
    c = LRUCache(2)
    c.put("a", 1); c.put("b", 2); c.put("a", 10)
    assert len(c) == 2 and c.get("b") == 2 and c.get("a") == 10
    assert c.stats.evictions == []


def test_update_refreshes():
    c = LRUCache(2)
    c.put("a", 1); c.put("b", 2); c.put("a", 3); c.put("c", 4)
    assert c.keys() == ["a", "c"]
    assert c.stats.evictions == ["b"]
