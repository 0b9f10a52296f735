"""Tests for semver.py: replace this placeholder with tests of its behaviour."""

import semver


def test_module_imports():
    assert semver.__name__ == "semver"
