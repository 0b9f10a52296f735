"""Tests for cron_field.py: replace this placeholder with tests of its behaviour."""

import cron_field


def test_module_imports():
    assert cron_field.__name__ == "cron_field"
