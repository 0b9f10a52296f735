import pytest
from buildgraph import CycleError, build_order


def test_alphabetical_ties():
    assert build_order({"z": [], "m": [], "a": [], "b": ["z"]}) == ["a", "m", "z", "b"]


def test_cycle_nodes():
    with pytest.raises(CycleError) as ei:
        build_order({"x": ["y"], "y": ["z"], "z": ["x"], "ok": []})
    assert ei.value.nodes == ["x", "y", "z"]


def test_self_loop():
    with pytest.raises(CycleError):
        build_order({"a": ["a"]})


def test_duplicate_deps():
    assert build_order({"b": ["a", "a"]}) == ["a", "b"]
