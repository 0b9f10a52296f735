"""The environment, reward, actions and eval logic on the in-memory backend: no sandbox, seconds.

The task's check is a reward file (``report: {"format": "reward_file"}``) that a Python handler
writes, the way ``agentenv.testing.MemoryBackend`` answers every command. What these tests pin down
holds on every backend: the evaluation sees the task's own files whatever the agent did, hidden
files never reach the agent, dense rewards sum to the score, an infrastructure failure is masked,
and an evaluation's results do not depend on the number of workers.
"""

from __future__ import annotations

import json
import threading

import gymnasium as gym
import pytest

import agentenv
from agentenv import SandboxError, read_jsonl
from agentenv.builtin.eval.run import EvalConfig, run_eval
from agentenv.testing import MemoryBackend, check_backend

pytestmark = pytest.mark.unit

TEST_FILE = b"def test_answer():\n    from solution import answer\n    assert answer() == 42\n"
HIDDEN = b"secret expectations\n"


def task_doc(task_id: str = "memory.answer") -> dict:
    return {
        "task_id": task_id, "description": "Make answer() return 42.",
        "environment_config": {"runtime": "python3"},
        "workspace": {"files": {"solution.py": "def answer():\n    return 0\n", "tests/test_solution.py": TEST_FILE.decode()}},
        "hidden_files": {"files": {"hidden/expect.txt": HIDDEN.decode()}},
        "execution_steps": [
            {"action": "overwrite_file", "path": "/app/solution.py", "content": "<model_generated_code>"},
            {"action": "run_command", "command": "check", "report": {"format": "reward_file"}}],
        "reward_logic": {"type": "composite", "rules": [{"metric": "report_score", "weight": 1.0}]},
        "reference_solution": {"files": {"solution.py": "def answer():\n    return 42\n"}},
        "max_rounds": 6,
    }


class Checker:
    """The handler: ``check`` scores the solution and records what the evaluation saw."""

    def __init__(self):
        self.seen: list[dict] = []
        self.fail_infra = False
        self.lock = threading.Lock()

    def __call__(self, command: str, box) -> tuple[int, str, str]:
        if command != "check":
            return 0, f"ran {command}\n", ""
        if self.fail_infra:
            raise SandboxError("the sandbox died (simulated)")
        solved = b"return 42" in box.files.get("/app/solution.py", b"")
        with self.lock:
            self.seen.append({"test_file": box.files.get("/app/tests/test_solution.py"),
                              "hidden": box.files.get("/app/hidden/expect.txt"),
                              "planted": sorted(p for p in box.files if "conftest" in p)})
        box.files[box.env["AGENTENV_REWARD_FILE"]] = b"1" if solved else b"0"
        return 0, "checked\n", ""


@pytest.fixture()
def task(tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task_doc()))
    return agentenv.load_task(path)


def make(task, checker, **kwargs):
    backend = MemoryBackend(checker)
    return gym.make("agentenv/Task-v0", task=task, backend=backend, **kwargs), backend


def test_the_memory_backend_keeps_the_sandbox_contract():
    assert check_backend(MemoryBackend(), runs_programs=False) == ["files", "isolation_between_sandboxes",
                                                                   "lifecycle", "workspace"]


def test_single_shot_scores_the_code_and_closes_every_sandbox(task):
    checker = Checker()
    env, backend = make(task, checker)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("def answer():\n    return 42\n")
    assert (reward, terminated, info["success"], info["metrics"]["report"]) == (1.0, True, True, "reward_file")
    env.reset()
    _, reward, *_ = env.step("def answer():\n    return 41\n")
    assert reward == 0.0
    env.close()
    assert backend.open_count == 0 and backend.opened >= 2
    assert all(s["hidden"] == HIDDEN for s in checker.seen), "hidden files reach every evaluation"


def test_agentic_evaluation_sees_the_tasks_files_whatever_the_agent_wrote(task):
    checker = Checker()
    env, backend = make(task, checker, mode="agentic")
    obs, _ = env.reset()
    assert "hidden" not in obs["prompt"]
    agent_box = env.unwrapped._sandbox
    assert "hidden/expect.txt" not in agent_box.list_files(task.root), "hidden files never reach the agent"
    for action in ({"action": "overwrite_file", "path": "tests/test_solution.py", "content": "def test_x(): pass\n"},
                   {"action": "overwrite_file", "path": "conftest.py", "content": "import os\n"},
                   {"action": "overwrite_file", "path": "solution.py", "content": "def answer():\n    return 42\n"}):
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward == 0.0 and not (terminated or truncated)
    obs, reward, terminated, _, info = env.step({"action": "submit"})
    assert (reward, terminated) == (1.0, True)
    [seen] = checker.seen
    assert seen["test_file"] == TEST_FILE and seen["planted"] == [], "protected files are the task's own"
    env.close()
    assert backend.open_count == 0


def test_dense_rewards_sum_to_the_final_score(task):
    env, _ = make(task, Checker(), mode="agentic", reward_mode="dense")
    env.reset()
    writes = ["return 42", "return 0", "return 42"]
    rewards = []
    for body in writes:
        _, r, *_ = env.step({"action": "overwrite_file", "path": "solution.py", "content": f"def answer():\n    {body}\n"})
        rewards.append(r)
    _, r, terminated, _, info = env.step({"action": "submit"})
    rewards.append(r)
    assert rewards[:3] == [1.0, -1.0, 1.0] and terminated
    assert sum(rewards) == pytest.approx(info["score"]) == pytest.approx(1.0)
    env.close()


def test_a_bad_action_is_an_observation_and_the_episode_goes_on(task):
    env, _ = make(task, Checker(), mode="agentic")
    env.reset()
    for bad in ("not json", {"action": "overwrite_fle", "path": "x"}, {"action": "run_command", "comand": "ls"}, 42):
        obs, reward, terminated, truncated, info = env.step(bad)
        assert obs["output"].startswith("[invalid action:") and not (terminated or truncated), bad
        assert info["action_error"]
    obs, *_ = env.step({"action": "run_command", "command": "ls"})
    assert "ran ls" in obs["output"]
    env.close()


def test_an_infrastructure_failure_is_masked_and_the_next_reset_recovers(task):
    checker = Checker()
    env, backend = make(task, checker)
    env.reset()
    checker.fail_infra = True
    _, reward, terminated, _, info = env.step("def answer():\n    return 42\n")
    assert info["reward_masked"] and "sandbox died" in info["infra_error"] and reward == 0.0 and terminated
    checker.fail_infra = False
    env.reset()
    _, reward, *_ = env.step("def answer():\n    return 42\n")
    assert reward == 1.0
    env.close()
    assert backend.open_count == 0


def _suite(tmp_path, n: int = 4) -> str:
    root = tmp_path / "suite"
    for i in range(n):
        (root / f"t{i}").mkdir(parents=True)
        (root / f"t{i}" / "task.json").write_text(json.dumps(task_doc(f"memory.t{i}")))
    (root / "suite.json").write_text(json.dumps({"name": "memory", "version": "1", "tasks": ["*/task.json"]}))
    return str(root)


def test_eval_results_do_not_depend_on_the_number_of_workers_or_lanes(tmp_path):
    suite = agentenv.read_suite(_suite(tmp_path))
    # sample 0 solves, sample 1 does not, sample 2 solves: a replay must play each sample's own episode
    lines = []
    for i in range(4):
        for sample, body in enumerate(["return 42", "return 0", "return 42"]):
            lines.append({"type": "step", "task_id": f"memory.t{i}", "sample": sample,
                          "action": f"def answer():\n    {body}\n"})
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    per_run = {}
    for workers, lanes in ((1, False), (2, True), (4, True), (4, False)):
        out = tmp_path / f"w{workers}-{lanes}"
        outcome = run_eval(EvalConfig(suite, f"replay:{replay}", str(out), samples=3, ks=(1, 3), workers=workers,
                                      backend=MemoryBackend(Checker()), progress=False, lanes=lanes))
        episodes = sorted((r["task_id"], r["sample"], r["reward"], r["success"])
                          for r in read_jsonl(out / "trajectories.jsonl") if r["type"] == "episode")
        per_run[(workers, lanes)] = (episodes, outcome.results["overall"]["pass_at_k"])
    assert len(set(map(repr, per_run.values()))) == 1, per_run
    episodes, pass_at_k = per_run[(1, False)]
    assert [e[2] for e in episodes if e[0] == "memory.t0"] == [1.0, 0.0, 1.0]
    assert pass_at_k["1"] == pytest.approx(2 / 3) and pass_at_k["3"] == 1.0


def test_a_replay_shorter_than_the_samples_says_so_instead_of_replaying_another(tmp_path):
    suite = agentenv.read_suite(_suite(tmp_path, n=1))
    replay = tmp_path / "replay.jsonl"
    replay.write_text(json.dumps({"type": "step", "task_id": "memory.t0", "sample": 0,
                                  "action": "def answer():\n    return 42\n"}) + "\n")
    out = tmp_path / "out"
    run_eval(EvalConfig(suite, f"replay:{replay}", str(out), samples=2, ks=(1,), backend=MemoryBackend(Checker()),
                        progress=False))
    episodes = {r["sample"]: r for r in read_jsonl(out / "trajectories.jsonl") if r["type"] == "episode"}
    assert episodes[0]["success"] and episodes[0]["reward"] == 1.0
    assert episodes[1]["cause"] == "agent_error" and "sample 1 was asked for" in episodes[1]["error"]
    assert episodes[1]["reward"] == 0.0, "a missing recording is not a duplicate of another"
