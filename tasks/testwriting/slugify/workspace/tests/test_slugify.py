"""Tests for slugify.py: replace this placeholder with tests of its behaviour."""

import slugify


def test_module_imports():
    assert slugify.__name__ == "slugify"
