"""Tests for durations.py: replace this placeholder with tests of its behaviour."""

import durations


def test_module_imports():
    assert durations.__name__ == "durations"
