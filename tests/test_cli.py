"""The agentenv command line, as a user runs it."""

import json
import os
import subprocess
import sys

from _paths import REFERENCE_DOC, example

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")


def cli(*args, cwd=None):
    return subprocess.run([AGENTENV, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_list_json_names_every_task():
    out = cli("list", "--json")
    rows = json.loads(out.stdout)
    assert out.returncode == 0
    fizz = [r for r in rows if r["task_id"] == "examples.fizzbuzz"][0]
    assert fizz == {"env_id": "agentenv/examples.fizzbuzz-v0", "task_id": "examples.fizzbuzz",
                    "suite": "examples", "path": example("fizzbuzz")}


def test_validate_reports_every_error_and_exits_1(tmp_path, repo):
    ok = cli("validate", os.path.join(repo, "tasks"))
    assert ok.returncode == 0 and " 0 invalid" in ok.stdout, ok.stderr[-2000:]
    doc = json.load(open(REFERENCE_DOC))
    doc["environment_config"]["runtime"] = "ruby"
    doc["reward_logic"]["rules"][0]["weight"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = cli("validate", str(bad), REFERENCE_DOC)
    assert out.returncode == 1
    assert f"{bad}: 2 problem(s)" in out.stderr
    assert "/environment_config/runtime: unknown runtime 'ruby'" in out.stderr
    assert "/reward_logic/rules/0/weight" in out.stderr
    assert "1 valid, 1 invalid" in out.stdout


def test_schema_prints_the_assembled_schema_and_checks_staleness():
    out = cli("schema")
    schema = json.loads(out.stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    assert "overwrite_file" in json.dumps(schema["properties"]["execution_steps"])
    assert cli("schema", "--check").returncode == 0


def test_run_json_gives_trajectory_and_reward():
    out = cli("run", "examples.fizzbuzz", "--agent", "noop", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["result"]["reward"] == 0.0 and doc["result"]["mode"] == "single_shot"
    assert [r["type"] for r in doc["trajectory"]] == ["reset", "step"]
    out = cli("run", "agentenv/examples.bank_transfer-v0", "--agent", "reference")
    assert out.returncode == 0 and "reward=1.000 success=True" in out.stdout


def test_unknown_task_and_agent_get_suggestions():
    out = cli("run", "examples.fizbuzz")
    assert out.returncode == 1 and "did you mean 'examples.fizzbuzz'" in out.stderr
    out = cli("run", "examples.fizzbuzz", "--agent", "refrence")
    assert out.returncode == 1 and "did you mean 'reference'" in out.stderr
