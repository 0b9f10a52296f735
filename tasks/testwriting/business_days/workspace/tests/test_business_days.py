"""Tests for business_days.py: replace this placeholder with tests of its behaviour."""

import business_days


def test_module_imports():
    assert business_days.__name__ == "business_days"
