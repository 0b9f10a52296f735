"""Tests for money_split.py: replace this placeholder with tests of its behaviour."""

import money_split


def test_module_imports():
    assert money_split.__name__ == "money_split"
