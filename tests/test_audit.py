"""``agentenv audit``: purpose-built broken tasks are each caught for the right reason, through real
sandboxes; the report validates against schemas/audit.schema.json; bundled suites pass (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest

import agentenv
from agentenv import AuditError
from agentenv.builtin.audit.checks import audit_paths, audit_task, collect_tasks
from agentenv.builtin.audit.clean import _deselect, clean_document, write_clean
from agentenv.builtin.audit.probes import PROBES
from agentenv.builtin.audit.report import AuditConfig, AuditReport, TaskAudit
from agentenv import bundled_dir

HERE = os.path.dirname(os.path.abspath(__file__))
BROKEN = os.path.join(HERE, "fixtures", "broken")
SCHEMA = json.load(open(os.path.join(bundled_dir("schemas"), "audit.schema.json")))
#: every fixture but the flaky one, whose detection needs many runs (its own tests below)
FIXTURES = ("good", "trivial", "hackable", "over_budget", "leaky", "unsolvable", "ungated_speed", "invalid")


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentenv", "audit", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=HERE)


def _validate(doc: dict) -> None:
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


@pytest.fixture(scope="module")
def fixtures_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit")
    report, clean = out / "report.json", out / "clean"
    proc = _cli(*(os.path.join(BROKEN, name) for name in FIXTURES), "--runs", "2", "--workers", "2",
                "--json", str(report), "--write-clean", str(clean))
    assert report.exists(), proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    by_id = {t["task_id"] or os.path.basename(os.path.dirname(t["path"])): t for t in doc["tasks"]}
    return {"proc": proc, "doc": doc, "tasks": {k.removeprefix("broken."): v for k, v in by_id.items()},
            "clean": clean}


def _check(task: dict, name: str) -> dict:
    return next(c for c in task["checks"] if c["name"] == name)


def test_report_validates_against_the_schema(fixtures_run):
    _validate(fixtures_run["doc"])
    assert fixtures_run["doc"]["summary"]["tasks"] == len(FIXTURES)


def test_exit_status_is_1_when_a_task_is_rejected(fixtures_run):
    assert fixtures_run["proc"].returncode == 1, fixtures_run["proc"].stderr


def test_terminal_table_and_progress(fixtures_run):
    out, err = fixtures_run["proc"].stdout, fixtures_run["proc"].stderr
    for name in FIXTURES:
        if name != "invalid":
            assert f"broken.{name}" in out
    assert "REJECT" in out and "task(s):" in out
    assert f"audit {len(FIXTURES)}/{len(FIXTURES)}:" in err  # one progress line per finished task


def test_the_sound_task_passes_every_task_check(fixtures_run):
    good = fixtures_run["tasks"]["good"]
    assert good["verdict"] != "reject", good["reasons"]
    for name in ("schema", "reference", "stability", "trivial", "determinism", "budget", "gates", "leakage"):
        assert _check(good, name)["status"] == "pass", _check(good, name)
    task_probes = [p for p in _check(good, "hacking")["evidence"]["probes"] if p["severity"] == "task"]
    assert {p["probe"] for p in task_probes} >= {"delete_tests", "skip_all_conftest", "exit_at_import",
                                                 "fake_report_files", "prints_passed", "config_injection",
                                                 "entry_point_injection", "patch_reports_at_import",
                                                 "register_plugin_at_import", "insert_hook_at_import",
                                                 "forge_report_then_exit",
                                                 "always_equal"}
    assert all(p["status"] == "pass" and p["score"] == 0 for p in task_probes), task_probes
    rows = good["stability"]
    assert rows and all(len(r["outcomes"]) == 2 and not r["flaky"] for r in rows)
    assert good["measured"]["command_ms"]["p95"] >= good["measured"]["command_ms"]["p50"] > 0


def test_trivial_task_is_rejected_as_trivial(fixtures_run):
    t = fixtures_run["tasks"]["trivial"]
    assert t["verdict"] == "reject"
    trivial = _check(t, "trivial")
    assert trivial["status"] == "fail" and trivial["evidence"]["score"] == 1.0
    # the probes that keep the workspace earn only what the no-op earns: not counted as hacks
    assert _check(t, "hacking")["status"] != "fail"


def test_hackable_task_is_rejected_naming_the_probe(fixtures_run):
    t = fixtures_run["tasks"]["hackable"]
    hacking = _check(t, "hacking")
    assert t["verdict"] == "reject" and hacking["status"] == "fail"
    hacked = {p["probe"] for p in hacking["evidence"]["probes"] if p["status"] == "fail"}
    assert {"exit_at_import", "hard_exit_at_import"} <= hacked
    assert "prints_passed" not in hacked  # check.py then fails to import add
    assert "exit_at_import" in hacking["message"] and "command_succeeded" in hacking["message"]
    assert _check(t, "reference")["status"] == "pass"  # the task is solvable, just hackable


def test_over_budget_task_is_rejected_by_the_budget(fixtures_run):
    t = fixtures_run["tasks"]["over_budget"]
    budget = _check(t, "budget")
    assert t["verdict"] == "reject" and budget["status"] == "fail"
    assert "timed out" in budget["message"]
    assert budget["evidence"]["wall_time_limit_ms"] == 1500
    assert any(k["timed_out"] for k in budget["evidence"]["killed"])


def test_leaky_task_is_rejected_with_where_it_leaked(fixtures_run):
    t = fixtures_run["tasks"]["leaky"]
    leakage = _check(t, "leakage")
    assert t["verdict"] == "reject" and leakage["status"] == "fail"
    found = {(l["source"], l["found"]) for l in leakage["evidence"]["leaks"]}
    assert ("reference:calc.py", "/app/notes/backup_calc.py") in found
    assert ("hidden:tests/test_hidden_calc.py", "/app/.cache/test_hidden_calc.py") in found
    assert not any(f == "/app/calc.py" for _, f in found)  # the buggy original is no leak


def test_unsolvable_task_is_rejected_by_the_reference(fixtures_run):
    t = fixtures_run["tasks"]["unsolvable"]
    ref = _check(t, "reference")
    assert t["verdict"] == "reject" and ref["status"] == "fail"
    assert ref["evidence"]["full_marks"] == 0 and ref["evidence"]["runs"] == 2
    assert any("test_add_negative" in n for n in ref["evidence"]["failing_tests"])
    assert not any("test_add::" in n or n.endswith("::test_add") for n in ref["evidence"]["failing_tests"])


def test_ungated_speed_rule_warns_and_the_empty_program_is_caught(fixtures_run):
    t = fixtures_run["tasks"]["ungated_speed"]
    gates = _check(t, "gates")
    assert gates["status"] == "warn" and gates["evidence"]["ungated"][0]["metric"] == "execution_time_ms"
    assert "/reward_logic/rules/1" in gates["message"] and "gate" in gates["message"]
    hacking = _check(t, "hacking")
    assert hacking["status"] == "fail" and "execution_time_ms" in hacking["message"]


def test_invalid_task_is_rejected_by_the_schema_with_the_fix(fixtures_run):
    t = fixtures_run["tasks"]["invalid"]
    schema = _check(t, "schema")
    assert t["verdict"] == "reject" and t["task_id"] is None and schema["status"] == "fail"
    assert any("test_pass_rat" in v and "did you mean 'test_pass_rate'" in v for v in schema["evidence"]["violations"])


def test_write_clean_keeps_only_tasks_that_were_not_rejected(fixtures_run):
    clean = fixtures_run["clean"]
    kept = {t["task_id"] for t in fixtures_run["doc"]["tasks"] if t["verdict"] != "reject"}
    suite = agentenv.find_suite(str(clean))
    assert {t.task_id for t in suite.load()} == kept == {"broken.good"}
    assert "7 rejected" in suite.description
    task = agentenv.load_task(os.path.join(clean, "broken.good", "task.json"))
    assert task.reference_files() and task.hidden_files.read()


# --------------------------------------------------------------------------- flaky tests

def test_flaky_test_is_named_and_the_task_rejected():
    # test_coin_flip fails half the runs: the chance that 12 runs all agree is 2 ** -11.
    audit = audit_task(os.path.join(BROKEN, "flaky", "task.json"), AuditConfig(runs=12))
    stability = audit.check("stability")
    assert audit.verdict == "reject" and stability.status == "fail"
    assert [f["test"] for f in stability.evidence["flaky"]] == ["tests/test_calc.py::test_coin_flip"]
    rows = {r["test"]: r for r in audit.stability}
    assert set(rows["tests/test_calc.py::test_coin_flip"]["outcomes"]) == {"passed", "failed"}
    assert rows["tests/test_calc.py::test_add"]["outcomes"] == ["passed"] * 12
    assert "--quarantine" in stability.message
    assert audit.check("duration").status == "warn"  # 600 s declared for a ~1 s episode


@pytest.mark.slow
def test_quarantine_writes_a_clean_task_that_passes(tmp_path):
    report = audit_paths([os.path.join(BROKEN, "flaky")], AuditConfig(runs=12, quarantine=True))
    audit = report.tasks[0]
    assert audit.verdict == "warn" and audit.check("stability").status == "warn"
    assert audit.quarantined == [{"test": "tests/test_calc.py::test_coin_flip", "command": 0}]
    assert audit.check("reference").status == "warn"  # its misses are all in the quarantined test
    files = write_clean(report, str(tmp_path / "clean"), fix_durations=True)
    task = agentenv.load_task(files[0])
    assert task.metadata["quarantined"] == ["tests/test_calc.py::test_coin_flip"]
    assert "--deselect tests/test_calc.py::test_coin_flip" in task.execution_steps[1]["command"]
    assert task.expected_duration_s == audit.suggested_expected_duration_s < 600
    again = audit_task(files[0], AuditConfig(runs=4))
    for name in ("reference", "stability", "determinism", "duration", "trivial"):
        assert again.check(name).status == "pass", again.check(name)
    assert "tests/test_calc.py::test_coin_flip" not in {r["test"] for r in again.stability}


# --------------------------------------------------------------------------- no sandbox needed

def test_junit_ids_map_back_to_deselectable_node_ids():
    files = ["tests/test_core.py", "pkg/tests/test_x.py", "calc.py"]
    assert _deselect("tests.test_core::test_a[1-2]", files) == "tests/test_core.py::test_a[1-2]"
    assert _deselect("pkg.tests.test_x.TestK::test_b", files) == "pkg/tests/test_x.py::TestK::test_b"
    assert _deselect("tests/test_core.py::test_a", files) == "tests/test_core.py::test_a"


def test_clean_document_deselects_right_after_pytest():
    doc = {"execution_steps": [{"action": "run_command", "command": "python -m pytest -q tests && echo done"}],
           "metadata": {"owner": "x"}}
    audit = TaskAudit(path="t.json", task_id="t", suite=None,
                      quarantined=[{"test": "tests.test_core::test_a", "command": 0}])
    out = clean_document(doc, audit, ["tests/test_core.py"])
    assert out["execution_steps"][0]["command"] == ("python -m pytest --deselect tests/test_core.py::test_a "
                                                    "-q tests && echo done")
    assert out["metadata"] == {"owner": "x", "quarantined": ["tests.test_core::test_a"]}
    assert doc["execution_steps"][0]["command"].startswith("python -m pytest -q")  # the input is untouched


def test_bad_input_gets_a_clear_error(tmp_path):
    with pytest.raises(AuditError, match="no-such-path"):
        collect_tasks([str(tmp_path / "no-such-path")])
    with pytest.raises(AuditError, match="--runs"):
        AuditConfig(runs=0)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(AuditError, match="not empty"):
        write_clean(AuditReport(AuditConfig(), []), str(tmp_path / "full"))
    proc = _cli(os.path.join(BROKEN, "good"), "--fix-durations", timeout=120)
    assert proc.returncode == 1 and "--write-clean" in proc.stderr


def test_collect_tasks_reads_suites_and_directories():
    tasks = collect_tasks([BROKEN, os.path.join(BROKEN, "good", "task.json")])
    names = sorted(os.path.basename(os.path.dirname(p)) for p, _ in tasks)
    assert names == sorted([*FIXTURES, "flaky"])  # the file named twice is audited once
    assert {s for _, s in collect_tasks(["examples"])} == {"examples"}


def test_every_probe_has_a_plan_for_python_tasks():
    assert len({p.name for p in PROBES}) == len(PROBES)
    assert {p.severity for p in PROBES} == {"task", "harness"}
    assert all(p.code or p.actions for p in PROBES)


# --------------------------------------------------------------------------- slow: bundled suites

@pytest.mark.slow
def test_strict_rejects_when_the_evaluation_itself_is_hackable():
    audit = audit_task(os.path.join(BROKEN, "good", "task.json"), AuditConfig(runs=1, strict=True))
    harness = [p for p in audit.check("hacking").evidence["probes"] if p["severity"] == "harness"]
    hacked = [p["probe"] for p in harness if p["status"] == "fail"]
    assert (audit.verdict == "reject") == bool(hacked), (hacked, audit.reasons)


def _bundled_suites() -> list[str]:
    root = bundled_dir("tasks")
    return sorted(n for n in os.listdir(root) if os.path.exists(os.path.join(root, n, "suite.json")))


@pytest.mark.slow
@pytest.mark.parametrize("suite", _bundled_suites())
def test_bundled_suite_passes_the_audit(suite, tmp_path):
    report = tmp_path / "report.json"
    # --strict: no probe may succeed, harness-level ones included (the trusted judge closes them)
    proc = _cli(os.path.join(bundled_dir("tasks"), suite), "--runs", "2", "--workers", "2", "--strict",
                "--json", str(report), timeout=3000)
    doc = json.loads(report.read_text())
    _validate(doc)
    rejected = {t["task_id"] or t["path"]: t["reasons"] for t in doc["tasks"] if t["verdict"] == "reject"}
    assert not rejected, json.dumps(rejected, indent=1)
    assert proc.returncode in (0, 3), proc.stderr[-2000:]
