"""Tests for byte_size.py: replace this placeholder with tests of its behaviour."""

import byte_size


def test_module_imports():
    assert byte_size.__name__ == "byte_size"
