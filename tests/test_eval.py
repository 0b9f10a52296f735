"""``agentenv eval``: real episodes in real sandboxes, concurrent workers, resume, infrastructure retries."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import jsonschema
import pytest

from agentenv import SandboxBackend, SandboxError, get_backend
from agentenv._cli import main
from agentenv import read_jsonl
from agentenv.builtin.eval.run import EvalConfig, pass_at_k, run_eval
from agentenv import find_suite
from agentenv import bundled_dir

FAST = "examples.fizzbuzz,examples.bank_transfer,examples.disk_report"
SCHEMAS = bundled_dir("schemas")


def validator(name):
    schema = json.load(open(os.path.join(SCHEMAS, name)))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def assert_valid(name, doc):
    errors = list(validator(name).iter_errors(doc))
    assert not errors, [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors]


def episodes(path):
    return [r for r in read_jsonl(os.path.join(path, "trajectories.jsonl")) if r["type"] == "episode"]


# --------------------------------------------------------------------------- pass@k

def brute_pass_at_k(n, c, k):
    """Probability that a random k-subset of n samples (c correct) holds a correct one, by enumeration."""
    subsets = list(itertools.combinations([True] * c + [False] * (n - c), k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_is_the_unbiased_estimator(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))
    assert pass_at_k(n, 0, n + 1) is None  # undefined with fewer samples than k


# --------------------------------------------------------------------------- the command

def test_eval_reference_and_noop_write_valid_results_and_trajectories(tmp_path, capfd):
    ref, noop = tmp_path / "ref", tmp_path / "noop"
    assert main(["eval", "--suite", "examples", "--tasks", FAST, "--agent", "reference", "--samples", "2",
                 "--workers", "2", "--out", str(ref)]) == 0
    out, err = capfd.readouterr()
    assert "pass@1=1.000" in out and "pass@2=1.000" in out
    for word in ("6/6 done", "running", "failed", "ep/s", "ETA"):
        assert word in err
    assert main(["eval", "--suite", "examples", "--tasks", FAST, "--agent", "noop", "--samples", "2",
                 "-k", "1,2", "--out", str(noop), "-q"]) == 0
    for folder, expected in ((ref, 1.0), (noop, 0.0)):
        results = json.load(open(folder / "results.json"))
        assert_valid("result.schema.json", results)
        overall = results["overall"]
        assert overall["pass_at_k"] == {"1": expected, "2": expected}
        assert overall["mean_reward"] == expected and overall["episodes"] == 6
        assert results["complete"] and results["suite"] == {**results["suite"], "name": "examples", "version": "1.0.0"}
        assert overall["failures"]["infrastructure"] == 0
        assert overall["failures"]["unsolved"] == (0 if expected else 6)
        assert {t["task_id"] for t in results["tasks"]} == set(FAST.split(","))
        assert results["runtimes"] and all(t["runtime_hash"] in results["runtimes"] for t in results["tasks"])
        records = read_jsonl(folder / "trajectories.jsonl")
        check = validator("trajectory.schema.json")
        for record in records:
            errors = list(check.iter_errors(record))
            assert not errors, (record["type"], errors[0].message[:300])
        assert {r["type"] for r in records} == {"run", "reset", "step", "episode"}
        keys = [(e["task_id"], e["sample"]) for e in records if e["type"] == "episode"]
        assert sorted(keys) == sorted(set(keys)) and len(keys) == 6
        steps = [r for r in records if r["type"] == "step"]
        assert all("action" in s and "runtime" in s and "metrics" in s for s in steps)
        assert any(s["reward_breakdown"] for s in steps)
    tasks = {t["task_id"]: t for t in json.load(open(ref / "results.json"))["tasks"]}
    assert tasks["examples.bank_transfer"]["mode"] == "agentic" and tasks["examples.fizzbuzz"]["mode"] == "single_shot"
    assert tasks["examples.bank_transfer"]["mean_rounds"] == 3


def test_trajectory_schema_rejects_a_broken_step_record():
    bad = {"type": "step", "schema": "agentenv.trajectory/1", "episode_id": "e", "env_id": "agentenv/x-v0",
           "task_id": "x", "mode": "agentic", "reward_mode": "terminal", "round": 1, "time": 1.0,
           "backend": "namespace", "runtime": {"hash": "h", "runtime": "python3.11"}, "reward_masked": False,
           "infra_error": None, "observation": {"prompt": "", "output": "", "round": 1},
           "action": {"action": "submit"}, "terminated": True, "truncated": False, "metrics": None,
           "reward_breakdown": None}
    check = validator("trajectory.schema.json")
    assert list(check.iter_errors(bad))  # no reward
    bad["reward"] = 1.0
    assert not list(check.iter_errors(bad))
    for key, value in (("reward", "high"), ("mode", "chatty"), ("observation", {"prompt": ""})):
        assert list(check.iter_errors({**bad, key: value})), key


def test_eval_refuses_an_existing_run_without_resume_and_bad_arguments(tmp_path, capfd):
    args = ["eval", "--suite", "examples", "--tasks", "examples.disk_report", "--agent", "noop", "-q",
            "--out", str(tmp_path)]
    assert main(args) == 0
    capfd.readouterr()
    assert main(args) == 1
    err = capfd.readouterr().err
    assert "trajectories.jsonl already holds a run; pass --resume" in err
    assert main(args + ["--resume"]) == 0
    assert "0 episode(s) run now" in capfd.readouterr().out
    assert main(args[:-1] + [str(tmp_path / "k"), "-k", "5"]) == 1
    assert "pass@5 needs at least 5 samples" in capfd.readouterr().err
    assert main(args[:-1] + [str(tmp_path / "m"), "--mode", "single_shot", "--tasks", "examples.bank_transfer"]) == 1
    assert "bank_transfer" in capfd.readouterr().err
    assert main(args[:-1] + [str(tmp_path / "a"), "--agent", "refrence"]) == 1
    assert "did you mean 'reference'" in capfd.readouterr().err
    assert main(args[:-1] + [str(tmp_path / "r"), "--resume", "--agent", "reference"]) == 0  # nothing to resume yet
    capfd.readouterr()
    assert main(args[:-1] + [str(tmp_path / "r"), "--resume"]) == 1
    assert "agent='reference'" in capfd.readouterr().err


def test_interrupted_eval_resumes_only_the_missing_episodes(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "agentenv", "eval", "--suite", "examples", "--tasks", "examples.disk_report",
           "--agent", "reference", "--samples", "12", "--out", str(out)]
    # A shell's background job (``cmd &``, as CI may be started) ignores SIGINT and children inherit
    # that; give the eval the default a terminal gives it, so Ctrl-C is what this test sends.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    traj = out / "trajectories.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if traj.exists() and '"type": "episode"' in traj.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    first = episodes(out)
    assert proc.returncode == 130, err
    assert "--resume" in err
    assert 1 <= len(first) < 12, "the run finished before the interrupt; the test needs a slower machine setup"
    partial = json.load(open(out / "results.json"))
    assert partial["complete"] is False and partial["overall"]["episodes"] == len(first)
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"({12 - len(first)} episode(s) run now)" in done.stdout
    keys = [e["sample"] for e in episodes(out)]
    assert sorted(keys) == list(range(12))
    results = json.load(open(out / "results.json"))
    assert results["complete"] and results["overall"]["pass_at_k"]["12"] == 1.0
    runs = [r for r in read_jsonl(traj) if r["type"] == "run"]
    assert len(runs) == 2 and runs[1]["resumed"] is True


# --------------------------------------------------------------------------- infrastructure failures

class FlakyBackend(SandboxBackend):
    """The real namespace backend, except that the first *failures* opens fail like a dead host would."""

    name = "flaky"

    def __init__(self, failures):
        self.real = get_backend("namespace")
        self.failures = failures
        self.opens = 0

    @classmethod
    def availability(cls):
        return get_backend("namespace").availability()

    def open(self, request):
        self.opens += 1
        if self.opens <= self.failures:
            raise SandboxError(f"injected failure {self.opens}")
        return self.real.open(request)


def test_an_infrastructure_failure_is_retried_then_reported_apart(tmp_path):
    suite = find_suite("examples")
    once = run_eval(EvalConfig(suite, "reference", str(tmp_path / "once"), samples=2, tasks=("examples.disk_report",),
                               backend=FlakyBackend(1), progress=False))
    assert once.results["overall"]["failures"]["infrastructure"] == 0
    assert once.results["overall"]["pass_at_k"]["1"] == 1.0
    records = read_jsonl(tmp_path / "once" / "trajectories.jsonl")
    masked = [r for r in records if r["type"] == "reset" and r["reward_masked"]]
    assert len(masked) == 1 and "injected failure 1" in masked[0]["infra_error"]

    always = run_eval(EvalConfig(suite, "reference", str(tmp_path / "always"), samples=2, retries=1,
                                 tasks=("examples.disk_report",), backend=FlakyBackend(10 ** 6), progress=False))
    overall = always.results["overall"]
    assert overall["failures"] == {"infrastructure": 2, "agent_error": 0, "timeout": 0, "unsolved": 0, "max_rounds": 0}
    assert overall["scored"] == 0 and overall["mean_reward"] is None and overall["pass_at_k"]["1"] is None
    assert_valid("result.schema.json", always.results)
    eps = episodes(tmp_path / "always")
    assert all(e["cause"] == "infrastructure" and e["attempt"] == 1 for e in eps)


def test_an_agent_that_crashes_is_a_model_failure_not_infrastructure(tmp_path):
    results = run_eval(EvalConfig(find_suite("examples"), f"command:{sys.executable} -c pass", str(tmp_path),
                                  tasks=("examples.disk_report",), progress=False)).results
    assert results["overall"]["failures"]["agent_error"] == 1
    assert results["overall"]["failures"]["infrastructure"] == 0 and results["overall"]["mean_reward"] == 0.0
    assert "closed its stdout" in episodes(tmp_path)[0]["error"]


@pytest.mark.unit
def test_records_encode_as_json_types_the_same_way_everywhere():
    import numpy as np

    from agentenv._trajectory import jsonable

    class Shout(str):
        pass

    class Frozen(dict):
        pass

    value = {1: (1.5, float("nan"), float("inf")), "np": [np.int64(3), np.float32(0.5), np.bool_(True)],
             "set": {7}, "sub": Frozen(a=Shout("x")), "none": None, "flag": False, "obj": ValueError("no")}
    assert jsonable(value) == {"1": [1.5, None, None], "np": [3, 0.5, True], "set": [7], "sub": {"a": "x"},
                               "none": None, "flag": False, "obj": "ValueError('no')"}
    assert type(jsonable(np.int64(3))) is int and json.dumps(jsonable(value))
