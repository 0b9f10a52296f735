"""Tests for roman.py: replace this placeholder with tests of its behaviour."""

import roman


def test_module_imports():
    assert roman.__name__ == "roman"
