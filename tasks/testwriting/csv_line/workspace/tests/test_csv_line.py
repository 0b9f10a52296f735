"""Tests for csv_line.py: replace this placeholder with tests of its behaviour."""

import csv_line


def test_module_imports():
    assert csv_line.__name__ == "csv_line"
