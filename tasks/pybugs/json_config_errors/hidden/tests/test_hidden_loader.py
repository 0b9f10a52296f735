import pytest
from settings import ConfigError, load_config, parse_config


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError):
        load_config(tmp_path / "nope.json")


def test_array_rejected():
    with pytest.raises(ConfigError):
        parse_config("[1, 2]")


def test_error_is_chained():
    with pytest.raises(ConfigError) as ei:
        parse_config("{oops}")
    assert ei.value.__cause__ is not None
