"""Tests for intervals.py: replace this placeholder with tests of its behaviour."""

import intervals


def test_module_imports():
    assert intervals.__name__ == "intervals"
