import pytest
from versions import InvalidVersion, Version, compare


def test_simple():
    assert compare("1.2.3", "1.2.4") == -1
    assert compare("2.0.0", "2.0.0") == 0


def test_numeric_components():
    assert compare("1.10.0", "1.9.0") == 1


def test_invalid():
    with pytest.raises(InvalidVersion):
        Version("1.2")


def test_sort():
    vs = ["1.0.10", "1.0.2", "0.9.0"]
    assert sorted(vs, key=Version) == ["0.9.0", "1.0.2", "1.0.10"]
