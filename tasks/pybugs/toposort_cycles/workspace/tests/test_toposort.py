import pytest
from buildgraph import CycleError, build_order, parse_rules


def test_chain():
    assert build_order({"app": ["lib"], "lib": ["core"]}) == ["core", "lib", "app"]


def test_parse_rules():
    assert parse_rules("a: b c  # x\nb:\n") == {"a": ["b", "c"], "b": []}


def test_cycle_detected():
    with pytest.raises(CycleError):
        build_order({"a": ["b"], "b": ["a"], "c": []})


def test_every_dep_before_target():
    deps = {"d": ["b", "c"], "b": ["a"], "c": ["a"]}
    order = build_order(deps)
    for t, ds in deps.items():
        assert all(order.index(x) < order.index(t) for x in ds)
