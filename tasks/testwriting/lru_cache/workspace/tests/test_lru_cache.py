"""Tests for lru_cache.py: replace this placeholder with tests of its behaviour."""

import lru_cache


def test_module_imports():
    assert lru_cache.__name__ == "lru_cache"
