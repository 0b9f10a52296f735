"""Tests for token_bucket.py: replace this placeholder with tests of its behaviour."""

import token_bucket


def test_module_imports():
    assert token_bucket.__name__ == "token_bucket"
