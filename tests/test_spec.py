"""Task documents: the reference format, every violation reported with its pointer, round-trips."""

import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv
from agentenv import TaskSpecError, load_task, parse_task
from _paths import REFERENCE_DOC, example

pytestmark = pytest.mark.unit

REFERENCE = {
    "task_id": "complex_code_refactor_01",
    "environment_config": {"runtime": "python3.10", "dependencies": ["pytest==7.4.0", "fastapi==0.104.1"]},
    "execution_steps": [
        {"action": "overwrite_file", "path": "/app/main.py", "content": "<model_generated_code>"},
        {"action": "run_command", "command": "pytest /app/tests/ --json-report"}],
    "reward_logic": {"type": "composite", "rules": [
        {"metric": "test_pass_rate", "weight": 0.7, "aggregation": "max"},
        {"metric": "execution_time_ms", "weight": 0.3, "aggregation": "min", "threshold": 5000}]},
}


def test_reference_document_is_shipped_verbatim_and_loads():
    assert json.load(open(REFERENCE_DOC)) == REFERENCE
    spec = load_task(REFERENCE_DOC)
    assert spec.task_id == "complex_code_refactor_01"
    assert spec.environment.runtime == "python3.10"
    assert spec.environment.dependencies == ("pytest==7.4.0", "fastapi==0.104.1")
    assert spec.root == "/app" and spec.single_shot_path == "main.py"
    assert [r.metric for r in spec.reward.rules] == ["test_pass_rate", "execution_time_ms"]
    assert spec.reward.rules[1].threshold == 5000
    with pytest.raises(Exception):
        spec.task_id = "x"  # frozen


def test_every_violation_is_reported_with_pointer_expected_and_found():
    doc = copy.deepcopy(REFERENCE)
    doc["environment_config"]["runtime"] = "pyhton3.11"
    doc["execution_steps"][0]["action"] = "overwrite_fle"
    doc["execution_steps"][1].pop("command")
    doc["reward_logic"]["rules"][0]["metric"] = "test_pas_rate"
    doc["reward_logic"]["rules"][1]["aggregation"] = "median"
    doc["max_round"] = 3
    with pytest.raises(TaskSpecError) as err:
        parse_task(doc, "bad.json")
    by_pointer = {v.pointer: v for v in err.value.violations}
    assert "/environment_config/runtime" in by_pointer
    assert "did you mean 'python3" in by_pointer["/environment_config/runtime"].message
    assert "did you mean 'overwrite_file'" in by_pointer["/execution_steps/0/action"].message
    assert by_pointer["/execution_steps/0/action"].found == "overwrite_fle"
    assert "/execution_steps/1/command" in by_pointer
    assert "did you mean 'test_pass_rate'" in by_pointer["/reward_logic/rules/0/metric"].message
    assert by_pointer["/reward_logic/rules/1/aggregation"].found == "median"
    assert "did you mean 'max_rounds'" in by_pointer["/max_round"].message
    text = str(err.value)
    assert text.startswith("bad.json: ") and "/execution_steps/1/command" in text


def test_semantic_checks(tmp_path):
    doc = copy.deepcopy(REFERENCE)
    del doc["reward_logic"]["rules"][1]["threshold"]
    doc["workspace"] = {"directory": "missing"}
    doc["execution_steps"][0]["path"] = "/etc/passwd"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    pointers = {v.pointer for v in err.value.violations}
    assert {"/reward_logic/rules/1/threshold", "/workspace/directory", "/execution_steps/0/path"} <= pointers


def test_unreadable_and_invalid_json_files(tmp_path):
    with pytest.raises(TaskSpecError, match="cannot read"):
        load_task(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"task_id": ')
    with pytest.raises(TaskSpecError, match="line 1"):
        load_task(bad)


def test_round_trip_of_a_full_task():
    spec = load_task(example("word_count"))
    again = parse_task(json.loads(json.dumps(spec.to_json())), spec.source, os.path.dirname(spec.source))
    assert again == spec
    assert spec.hidden_files is not None and spec.reference_solution is not None


def test_round_trip_keeps_the_reference_document_as_written():
    spec = load_task(REFERENCE_DOC)
    assert spec.to_json() == REFERENCE


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_arbitrary_json_only_ever_raises_taskspecerror(doc):
    try:
        parse_task(doc)
    except TaskSpecError as exc:
        assert exc.violations
        for v in exc.violations:
            assert v.pointer == "" or v.pointer.startswith("/")


def _mutations():
    keys = st.sampled_from(["task_id", "environment_config", "execution_steps", "reward_logic", "limits",
                            "max_rounds", "workspace", "tags"])
    return st.tuples(keys, json_values)


@settings(max_examples=200, deadline=None)
@given(_mutations())
def test_mutated_reference_documents_never_crash(mutation):
    key, value = mutation
    doc = copy.deepcopy(REFERENCE)
    doc[key] = value
    try:
        spec = parse_task(doc)
    except TaskSpecError:
        return
    assert parse_task(spec.to_json()) == spec


valid_rules = st.lists(
    st.fixed_dictionaries({
        "metric": st.sampled_from(["test_pass_rate", "tests_passed", "command_succeeded"]),
        "weight": st.floats(min_value=0, max_value=1),
        "aggregation": st.sampled_from(["max", "min", "mean", "last", "first"]),
    }, optional={"scoring": st.sampled_from(["linear", "step"]), "threshold": st.floats(min_value=0.01, max_value=10)}),
    min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(rules=valid_rules, rounds=st.integers(1, 500), tags=st.lists(st.text(min_size=1, max_size=8), max_size=3),
       wall=st.floats(min_value=0.1, max_value=600))
def test_valid_specs_round_trip(rules, rounds, tags, wall):
    doc = copy.deepcopy(REFERENCE)
    doc["reward_logic"]["rules"] = rules
    doc.update(max_rounds=rounds, tags=tags, limits={"wall_time_s": wall})
    spec = parse_task(doc)
    assert parse_task(json.loads(json.dumps(spec.to_json()))) == spec


def test_schema_file_is_current():
    """schemas/task.schema.json is generated; regenerate with `agentenv schema --write`."""
    from agentenv._plugins import PluginManager
    from agentenv import bundled_dir

    expected = json.dumps(agentenv.task_schema(PluginManager(autoload=False).registry), indent=2, sort_keys=True) + "\n"
    path = os.path.join(bundled_dir("schemas"), "task.schema.json")
    assert open(path).read() == expected, "schemas/task.schema.json is stale: run `agentenv schema --write`"


def test_schema_validates_every_bundled_task_with_plain_jsonschema():
    import glob

    import jsonschema
    from agentenv import bundled_dir

    schema = json.load(open(os.path.join(bundled_dir("schemas"), "task.schema.json")))
    validator = jsonschema.Draft202012Validator(schema)
    files = glob.glob(os.path.join(bundled_dir("tasks"), "*", "*", "task.json")) + [REFERENCE_DOC]
    assert len(files) >= 6
    for path in files:
        errors = list(validator.iter_errors(json.load(open(path))))
        assert not errors, (path, errors[0].message)


def test_glob_matching_of_protected_paths():
    from agentenv import matches_any

    patterns = ("tests/**", "**/conftest.py", "**/test_*.py")
    assert matches_any("tests/test_a.py", patterns)
    assert matches_any("conftest.py", patterns)
    assert matches_any("pkg/sub/conftest.py", patterns)
    assert matches_any("pkg/test_fake.py", patterns)
    assert not matches_any("pkg/main.py", patterns)
    assert not matches_any("testsuite.py", patterns)
