from confmerge import deep_merge, merge_layers

DEFAULTS = {"db": {"host": "localhost", "port": 5432}, "debug": False, "tags": ["a"]}


def test_flat_override():
    assert deep_merge({"a": 1}, {"a": 2, "b": 3}) == {"a": 2, "b": 3}


def test_nested_kept():
    out = deep_merge(DEFAULTS, {"db": {"port": 6000}})
    assert out["db"] == {"host": "localhost", "port": 6000}


def test_inputs_untouched():
    base = {"db": {"host": "h"}}
    deep_merge(base, {"db": {"host": "x"}, "new": 1})
    assert base == {"db": {"host": "h"}}


def test_layers():
    assert merge_layers([{"a": {"b": 1}}, {"a": {"c": 2}}]) == {"a": {"b": 1, "c": 2}}
