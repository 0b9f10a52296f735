"""Tests for iban.py: replace this placeholder with tests of its behaviour."""

import iban


def test_module_imports():
    assert iban.__name__ == "iban"
