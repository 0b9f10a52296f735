"""Tests for word_wrap.py: replace this placeholder with tests of its behaviour."""

import word_wrap


def test_module_imports():
    assert word_wrap.__name__ == "word_wrap"
