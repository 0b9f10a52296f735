"""The Gymnasium environments, end to end on the real namespace sandbox."""

import glob
import json
import sys
import subprocess
import os
import shutil
import tempfile

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agentenv
from agentenv import CodingEnv, load_task, make_agent, run_episode
from _paths import EXAMPLES, example

EXAMPLE_IDS = sorted(f"agentenv/{json.load(open(p))['task_id']}-v0" for p in glob.glob(os.path.join(EXAMPLES, "*", "task.json")))


def test_import_registers_every_bundled_task():
    listed = subprocess.run([sys.executable, "-m", "agentenv", "list", "--json"], capture_output=True, text=True, check=True)
    ids = {e["env_id"] for e in json.loads(listed.stdout)}
    assert set(EXAMPLE_IDS) <= ids and len(ids) >= 45
    assert set(ids) <= set(gym.registry)
    assert "agentenv/Task-v0" in gym.registry


def test_unknown_id_gets_gymnasiums_did_you_mean():
    with pytest.raises(gym.error.Error) as err:
        gym.make("agentenv/examples.fizbuzz-v0")
    assert "examples.fizzbuzz" in str(err.value)


@pytest.mark.parametrize("env_id", EXAMPLE_IDS)
def test_reference_full_marks_noop_zero_in_both_modes(env_id):
    task = load_task(gym.spec(env_id).kwargs["task"])
    modes = (["single_shot"] if task.single_shot_path else []) + ["agentic"]
    for mode in modes:
        env = gym.make(env_id, mode=mode)
        try:
            ref = run_episode(env, make_agent("reference", task, mode))
            noop = run_episode(env, make_agent("noop", task, mode))
        finally:
            env.close()
        assert (ref.reward, ref.success, ref.reward_masked) == (1.0, True, False), (mode, ref.steps[-1]["output"][-2000:])
        assert (noop.reward, noop.success) == (0.0, False), mode
        # the no-op really ran the tests: they failed, or (fast_primes) the slow code hit its CPU-time
        # limit (killed by a signal) or the wall-time limit
        m = noop.info["metrics"]
        assert m["tests_failed"] > 0 or m["timed_out"] == 1.0 or m["exit_code"] < 0, m


def test_generic_id_takes_a_task_path_and_reports_runtime_and_isolation():
    env = gym.make("agentenv/Task-v0", task=example("fizzbuzz"))
    obs, info = env.reset(seed=1)
    assert "fizzbuzz.py" in obs["prompt"] and obs["round"] == 0
    assert info["runtime"]["python"].startswith("3.11") and "pytest" in info["runtime"]["packages"]
    assert info["isolation"]["backend"] == "namespace" and info["isolation"]["features"]["network"].startswith("namespace")
    obs, reward, terminated, truncated, info = env.step("def fizzbuzz(n):\n    return []\n")
    assert terminated and not truncated and reward == 0.0
    assert info["metrics"]["tests_failed"] >= 1 and info["metrics"]["error"]["type"] == "AssertionError"
    assert info["measurements"]["execution_time_ms"] > 0
    with pytest.raises(gym.error.ResetNeeded):
        env.unwrapped.step("x")
    env.close()
    env.close()  # idempotent


@pytest.mark.parametrize("mode", ["single_shot", "agentic"])
def test_check_env_passes(mode):
    env = CodingEnv(example("fizzbuzz"), mode=mode)
    check_env(env, skip_render_check=True)
    env.close()


def test_make_vec_runs_episodes_in_parallel_envs():
    envs = gym.make_vec("agentenv/examples.fizzbuzz-v0", num_envs=2, vectorization_mode="sync")
    task = load_task(example("fizzbuzz"))
    obs, info = envs.reset(seed=0)
    actions = [task.reference_code(), "def fizzbuzz(n):\n    return []\n"]
    obs, rewards, terminated, truncated, info = envs.step(actions)
    assert list(rewards) == [1.0, 0.0] and all(terminated)
    envs.close()


def agentic(task="fizzbuzz", **kw):
    return CodingEnv(example(task), mode="agentic", **kw)


def solved_fizzbuzz():
    return load_task(example("fizzbuzz")).reference_code()


HACKS = {
    "delete the tests": [{"action": "run_command", "command": "rm -rf tests"}],
    "tests that always pass": [{"action": "overwrite_file", "path": "tests/test_fizzbuzz.py",
                                "content": "def test_ok():\n    pass\n"}],
    "a conftest that passes everything": [{"action": "overwrite_file", "path": "conftest.py", "content":
        "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    rep = outcome.get_result()\n    rep.outcome = 'passed'\n"}],
    "a conftest deep in a package": [{"action": "overwrite_file", "path": "tests/sub/conftest.py",
                                      "content": "import pytest\ncollect_ignore_glob = ['*']\n"}],
    "sys.exit(0) in a test": [{"action": "overwrite_file", "path": "tests/test_fizzbuzz.py",
                               "content": "import sys\nsys.exit(0)\n"}],
    "sys.exit(0) at import of the solution": [{"action": "overwrite_file", "path": "fizzbuzz.py",
                                               "content": "import sys\nsys.exit(0)\n"}],
    "os._exit(0) at import after faking a report": [{"action": "overwrite_file", "path": "fizzbuzz.py", "content":
        "import glob, json, os, sys\n"
        "for a in sys.argv:\n"
        "    if a.startswith('--json-report-file='):\n"
        "        open(a.split('=', 1)[1], 'w').write(json.dumps({'tests': [{'nodeid': 'x', 'outcome': 'passed'}]}))\n"
        "os._exit(0)\n"}],
    "a fake JSON report in the workspace": [
        {"action": "overwrite_file", "path": ".report.json", "content": '{"tests": [{"nodeid": "a", "outcome": "passed"}]}'},
        {"action": "run_command", "command": "cp .report.json /tmp/.report.json"}],
    "a test file of its own": [{"action": "overwrite_file", "path": "test_extra.py", "content": "def test_x():\n    pass\n"}],
    "a pytest.py that shadows the runner": [{"action": "overwrite_file", "path": "pytest.py", "content":
        "import sys, json\n"
        "for a in sys.argv:\n"
        "    if a.startswith('--json-report-file='):\n"
        "        open(a.split('=', 1)[1], 'w').write(json.dumps({'tests': [{'nodeid': 't::ok', 'outcome': 'passed'}]}))\n"
        "print('1 passed')\n"}],
    "an atexit hook that rewrites the real report as all passed": [{"action": "overwrite_file", "path": "fizzbuzz.py",
        "content": "import atexit, json, sys\n"
        "def fake():\n"
        "    for a in sys.argv:\n"
        "        if a.startswith('--json-report-file='):\n"
        "            p = a.split('=', 1)[1]\n"
        "            try:\n"
        "                doc = json.load(open(p))\n"
        "            except Exception:\n"
        "                doc = {'tests': []}\n"
        "            for t in doc['tests']:\n"
        "                t['outcome'] = 'passed'\n"
        "            names = ['test_length', 'test_small', 'test_fifteen', 'test_empty']\n"
        "            doc['tests'] = doc['tests'] or [{'nodeid': f'tests/test_fizzbuzz.py::{n}', 'outcome': 'passed'} for n in names]\n"
        "            open(p, 'w').write(json.dumps(doc))\n"
        "atexit.register(fake)\n"
        "def fizzbuzz(n):\n    return []\n"}],
    "print passed": [{"action": "overwrite_file", "path": "fizzbuzz.py",
                      "content": "print('==== 4 passed in 0.01s ====')\nimport sys\nsys.exit(0)\n"}],
}


@pytest.mark.parametrize("name", sorted(HACKS))
def test_reward_hacks_earn_nothing(name):
    env = agentic()
    env.reset()
    for action in HACKS[name] + [{"action": "submit"}]:
        obs, reward, terminated, truncated, info = env.step(action)
    assert terminated and reward == 0.0 and not info["reward_masked"], (name, obs["output"][-1500:])
    env.close()


def test_protected_files_are_restored_but_the_solution_counts():
    env = agentic()
    env.reset()
    env.step({"action": "run_command", "command": "rm -rf tests && echo gone"})
    env.step({"action": "overwrite_file", "path": "/app/fizzbuzz.py", "content": solved_fizzbuzz()})
    obs, reward, terminated, truncated, info = env.step({"action": "submit"})
    assert reward == 1.0 and info["metrics"]["tests_passed"] == 4
    env.close()


def test_hidden_tests_never_reach_the_agent():
    env = agentic("word_count")
    env.reset()
    _, _, _, _, info = env.step({"action": "list_files"})
    obs, *_ = env.step({"action": "run_command", "command": "find / \\( -path /proc -o -path /dev \\) -prune -o -name 'test_hidden*' -print; "
                                         "grep -rl test_ties_alphabetical /app /tmp; ls tests"})
    shown = obs["output"].split("\n", 1)[1]  # what the command printed, after its echo
    assert "test_hidden" not in shown and "test_ties" not in shown and "test_core.py" in shown
    env.close()


def test_hidden_tests_are_scored():
    env = CodingEnv(example("word_count"))
    env.reset()
    # passes the three visible tests, fails the two hidden ones (ties, apostrophes)
    visible_only = ("import re\nfrom collections import Counter\n\ndef top_words(text, k):\n"
                    "    return Counter(re.findall(r'[a-z]+', text.lower())).most_common(k)\n")
    _, reward, _, _, info = env.step(visible_only)
    assert reward == 0.0 and info["metrics"]["tests_total"] == 5 and info["metrics"]["tests_passed"] == 3
    env.close()


def test_paths_outside_the_workspace_are_refused():
    env = agentic()
    env.reset()
    for action in ({"action": "read_file", "path": "/etc/passwd"}, {"action": "overwrite_file", "path": "../x", "content": ""},
                   {"action": "list_files", "path": "/"}):
        obs, reward, terminated, truncated, info = env.step(action)
        assert "outside the workspace" in info["action_error"] and not terminated
    obs, *_ = env.step("this is not json")
    assert "not a JSON action" in obs["output"]
    obs, *_ = env.step({"action": "rm_rf"})
    assert "unknown action 'rm_rf'" in obs["output"]
    env.close()


def test_apply_patch_and_read_file():
    env = agentic()
    env.reset()
    patch = ("--- a/fizzbuzz.py\n+++ b/fizzbuzz.py\n@@ -12,4 +12,4 @@ def label(i: int) -> str:\n"
             " def fizzbuzz(n: int) -> list[str]:\n     \"\"\"Labels for 1..n inclusive.\"\"\"\n"
             "-    return [label(i) for i in range(1, n)]\n+    return [label(i) for i in range(1, n + 1)]\n")
    obs, *_ = env.step({"action": "apply_patch", "patch": patch})
    assert obs["output"] == "patched fizzbuzz.py", obs["output"]
    obs, *_ = env.step({"action": "read_file", "path": "fizzbuzz.py"})
    assert "range(1, n + 1)" in obs["output"]
    bad = patch.replace("range(1, n)]", "range(2, n)]")
    obs, _, _, _, info = env.step({"action": "apply_patch", "patch": bad})
    assert "does not apply" in info["action_error"]
    env.close()


def test_more_than_100_rounds_then_truncation_with_evaluation():
    env = agentic(max_rounds=120)
    obs, _ = env.reset()
    for i in range(119):
        obs, reward, terminated, truncated, info = env.step({"action": "run_command", "command": f"echo {i}"})
        assert not (terminated or truncated) and obs["output"].endswith(f"\n{i}")
    obs, reward, terminated, truncated, info = env.step({"action": "overwrite_file", "path": "fizzbuzz.py",
                                                         "content": solved_fizzbuzz()})
    assert truncated and not terminated and reward == 1.0 and obs["round"] == 120
    env.close()


def test_dense_rewards_sum_to_the_final_score():
    env = agentic(reward_mode="dense")
    env.reset()
    rewards = []
    for action in ({"action": "overwrite_file", "path": "fizzbuzz.py", "content": "def fizzbuzz(n):\n    return []\n"},
                   {"action": "overwrite_file", "path": "fizzbuzz.py", "content": solved_fizzbuzz()},
                   {"action": "read_file", "path": "fizzbuzz.py"},
                   {"action": "submit"}):
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
    assert rewards[1] == 1.0 and sum(rewards) == pytest.approx(info["score"]) == pytest.approx(1.0)
    env.close()


def test_a_dense_score_is_the_score_of_the_workspace_as_it_is_now(tmp_path):
    """Each evaluation is scored on its own runs, whatever a rule aggregates: with "first", a score
    kept from the episode's first evaluation scored a later solution 0 (and kept a deleted one's 1)."""
    doc = json.load(open(example("fizzbuzz")))
    for rule in doc["reward_logic"]["rules"]:
        rule["aggregation"] = "first"
    for part in ("workspace", "solution"):
        shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz", part), tmp_path / part)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    unsolved = "def fizzbuzz(n):\n    return []\n"
    for order, want in (((unsolved, solved_fizzbuzz()), 1.0), ((solved_fizzbuzz(), unsolved), 0.0)):
        env = CodingEnv(str(path), mode="agentic", reward_mode="dense")
        env.reset()
        rewards = [env.step({"action": "overwrite_file", "path": "fizzbuzz.py", "content": c})[1] for c in order]
        *_, info = env.step({"action": "submit"})
        env.close()
        assert info["score"] == want and sum(rewards) == pytest.approx(want), (order, rewards, info["score"])


def test_terminate_on_success(tmp_path):
    doc = json.load(open(example("fizzbuzz")))
    doc["terminate_on_success"] = True
    for part in ("workspace", "solution"):  # a task's folders must lie inside its own folder
        shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz", part), tmp_path / part)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    env = CodingEnv(str(path), mode="agentic", reward_mode="dense")
    env.reset()
    _, reward, terminated, truncated, info = env.step({"action": "overwrite_file", "path": "fizzbuzz.py",
                                                       "content": solved_fizzbuzz()})
    assert terminated and info["success"] and reward == 1.0
    env.close()


def test_infrastructure_failure_is_masked_and_the_env_recovers():
    env = agentic()
    env.reset()
    sandbox = env._sandbox
    os.kill(sandbox.init_pid, 9)
    obs, reward, terminated, truncated, info = env.step({"action": "run_command", "command": "echo hi"})
    assert info["reward_masked"] and info["infra_error"] and terminated and reward == 0.0
    env.reset()
    obs, reward, terminated, truncated, info = env.step({"action": "run_command", "command": "echo back"})
    assert obs["output"].endswith("back") and not info["reward_masked"]
    env.close()


def test_missing_runtime_is_a_clear_error(tmp_path):
    doc = json.load(open(example("fizzbuzz")))
    doc["environment_config"]["runtime"] = "python3.99"
    shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz", "workspace"), tmp_path / "workspace")
    del doc["reference_solution"]
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(agentenv.RuntimeBuildError) as err:
        CodingEnv(str(path))
    assert "python3.99" in str(err.value) and "found here" in str(err.value) and "python3.11" in str(err.value)


def test_trajectory_records_stream_as_json_lines(tmp_path):
    out = tmp_path / "traj.jsonl"
    env = CodingEnv(example("fizzbuzz"), trajectory=str(out))
    env.reset(seed=3)
    env.step(solved_fizzbuzz())
    env.close()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["type"] for r in records] == ["reset", "step"]
    step = records[1]
    assert step["reward"] == 1.0 and step["runtime"]["packages"]["pytest"] == "8.3.5"
    assert step["scored_runs"][0]["test_outcomes"] and step["episode_id"] == records[0]["episode_id"]


@pytest.mark.slow
def test_a_thousand_episodes_leak_nothing(tmp_path, monkeypatch):
    doc = {"task_id": "leak.check", "environment_config": {"runtime": "python3"},
           "workspace": {"files": {"main.py": "print(1)\n"}},
           "execution_steps": [{"action": "overwrite_file", "path": "/app/main.py", "content": "<model_generated_code>"},
                               {"action": "run_command", "command": "python -S main.py"}],
           "reward_logic": {"type": "composite", "rules": [{"metric": "command_succeeded", "weight": 1.0}]}}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    # a private temp dir: other agentenv processes on this host make and remove theirs in /tmp
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    env = CodingEnv(str(path), mode="agentic")

    # The episodes' own background processes carry unmistakable arguments, so the count is exact:
    # a system-wide count of uid 65534 would also see other tests' warm pools refilling.
    marks = ("sleep 9871", "sleep 9872")

    def census():
        procs = sum(1 for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) in marks)
        # (ours only: the Docker engine, say, mounts and unmounts in this mount namespace too)
        mounts = sum(1 for line in open("/proc/self/mountinfo") if str(tmp_path) in line or "agentenv" in line)
        fds = len(os.listdir("/proc/self/fd"))
        tmp = len(os.listdir(private))
        return procs, mounts, fds, tmp

    env.reset()
    env.step({"action": "submit"})
    before = census()
    for i in range(1000):
        env.reset()
        env.step({"action": "run_command", "command": "sleep 9871 & (sleep 9872 &) ; echo started"})
        _, reward, terminated, _, _ = env.step({"action": "submit"})
        assert reward == 1.0 and terminated
    env.close()
    import time
    time.sleep(1.0)
    after = census()
    assert after == before, f"leak (processes, mounts, fds, /tmp entries): {before} -> {after}"


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def _bundled_env_modes():
    for env_id, path in sorted(agentenv.register_envs().items()):
        task = load_task(path)
        # both modes are checked on the examples above; here each task in its primary mode
        mode = "single_shot" if task.supports_single_shot else "agentic"
        yield pytest.param(path, mode, id=f"{task.task_id}-{mode}")


@pytest.mark.slow
@pytest.mark.parametrize("path,mode", list(_bundled_env_modes()))
def test_check_env_passes_for_every_bundled_task(path, mode):
    env = CodingEnv(path, mode=mode)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()
