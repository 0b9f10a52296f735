"""Tests for paginator.py: replace this placeholder with tests of its behaviour."""

import paginator


def test_module_imports():
    assert paginator.__name__ == "paginator"
