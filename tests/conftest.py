import pytest

from _paths import REPO


@pytest.fixture(scope="session")
def repo():
    return REPO
