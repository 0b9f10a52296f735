from confmerge import deep_merge


def test_lists_replaced():
    assert deep_merge({"t": [1, 2]}, {"t": [3]}) == {"t": [3]}


def test_none_deletes():
    assert deep_merge({"a": 1, "b": {"c": 2, "d": 3}}, {"a": None, "b": {"d": None}}) == {"b": {"c": 2}}


def test_result_not_aliased():
    over = {"x": {"y": [1]}}
    out = deep_merge({}, over)
    out["x"]["y"].append(2)
    assert over == {"x": {"y": [1]}}
