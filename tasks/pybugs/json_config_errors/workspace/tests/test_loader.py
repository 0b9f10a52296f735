import pytest
from settings import ConfigError, load_config, parse_config


def test_load_merges(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"port": 9000}')
    cfg = load_config(p)
    assert cfg["port"] == 9000 and cfg["host"] == "127.0.0.1"


def test_parse_ok():
    assert parse_config('{"a": 1}') == {"a": 1}


def test_syntax_error_raises(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{\n  "port": 9000,\n  "debug": tru\n}')
    with pytest.raises(ConfigError, match="line 3"):
        load_config(p)


def test_defaults_not_mutated(tmp_path):
    p = tmp_path / "c.json"
    p.write_text('{"workers": 8}')
    load_config(p)
    from settings.defaults import DEFAULTS
    assert DEFAULTS["workers"] == 2
