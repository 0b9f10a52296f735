"""The `readability` reward model with the bundled checkpoint: real episodes of the rm.readable suite,
attacks with content that is not code, bounds on what the agent wrote, options, and the check that a
reward model cannot lift a failing solution above a passing one."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import gymnasium as gym
import pytest

import agentenv
from agentenv_rm import transforms
from agentenv_rm.dominance import check_dominance, one_test_short
from agentenv_rm.evaluate import ATTACKS, attack
from agentenv_rm.model import CheckpointError, load_checkpoint
from agentenv_rm.plugin import SUITES_DIR
from agentenv_rm.reward import BUNDLED_CHECKPOINT, ReadabilityOptionsError, check_options, scorer_for
from agentenv_rm.scorer import MAX_FILE_BYTES, Scorer

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")
SUITE = os.path.join(SUITES_DIR, "readable")
TASKS = {"rm.readable.moving_average": "moving_average.py", "rm.readable.top_words": "words.py"}

READABLE = '''def running_totals(amounts):
    """The total after each amount, in order."""
    totals = []
    current = 0
    for amount in amounts:
        current += amount
        totals.append(current)
    return totals
'''
MESSY = "def running_totals(a):\n t=[];c=0\n for x in a:c+=x;t.append(c)\n return t\n"
# passing solutions of the suite's tasks, written carelessly
SLOPPY = {"rm.readable.moving_average": "def moving_average(v, w):\n    if w<=0: raise ValueError(w)\n    r=[]\n"
                                        "    for i in range(len(v)-w+1):r.append(sum(v[i:i+w])/w)\n    return r\n",
          "rm.readable.top_words": "import re\nfrom collections import Counter\ndef top_words(t, n):\n"
                                   "    c=Counter(re.findall(r\"[\\w']+\",t.lower()));l=sorted(c.items(),key=lambda a:(-a[1],a[0]))\n"
                                   "    return l[:n]\n"}


@pytest.fixture(scope="module")
def scorer():
    return scorer_for(BUNDLED_CHECKPOINT)


def _read(task: str, folder: str) -> str:
    with open(os.path.join(SUITE, task.rsplit(".", 1)[1], folder, TASKS[task])) as f:
        return f.read()


# ------------------------------------------------------------------ the bundled checkpoint

def test_the_bundled_checkpoint_is_small_and_says_how_to_make_it_again():
    assert os.path.getsize(BUNDLED_CHECKPOINT) < 5 * 2 ** 20
    _, calibration, meta = load_checkpoint(BUNDLED_CHECKPOINT)
    assert meta["command"].startswith("agentenv rm train") and "--seed" in meta["command"]
    assert isinstance(meta["seed"], int) and len(meta["dataset_sha256"]) == 64 and calibration["a"] > 0
    assert meta["val_accuracy"] > 0.8


def test_scores_are_in_range_batched_and_prefer_readable_code(scorer):
    sources = [READABLE, MESSY, transforms.rename(READABLE, random.Random(0))]
    batched = scorer.score_snippets(sources)
    one_by_one = [scorer.score_snippets([s])[0] for s in sources]
    assert batched == pytest.approx(one_by_one, abs=1e-5)
    assert all(0.0 <= s <= 1.0 for s in batched)
    assert batched[0] > batched[1] and batched[0] > batched[2]
    small_cache = Scorer(BUNDLED_CHECKPOINT, cache_size=1)  # more snippets than the cache holds: all answered
    assert small_cache.score_snippets(sources + ["def f(:\n"]) == pytest.approx(batched + [None], abs=1e-6)


# ------------------------------------------------------------------ real episodes

@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_suite_tasks_reward_tests_first_and_readability_on_top(task_id):
    env = gym.make(f"agentenv/{task_id}-v0")
    try:
        env.reset()
        reference = _read(task_id, "solution")
        _, good, _, _, info = env.step(reference)
        readability = info["reward_breakdown"]["1:model:readability"]["score"]
        assert info["success"] and good == pytest.approx(0.9 + 0.1 * readability) and 0.0 < readability <= 1.0
        env.reset()
        _, worse, _, _, info = env.step(SLOPPY[task_id])
        assert info["success"] and info["metrics"]["test_pass_rate"] == 1.0
        assert 0.9 <= worse < good  # passes too, reads worse
        env.reset()
        _, failing, _, _, info = env.step(_read(task_id, "workspace"))  # the starting code fails the tests
        assert failing == 0.0 and not info["success"]
    finally:
        env.close()


def test_a_task_naming_readability_validates_only_where_the_plugin_is_installed():
    task = os.path.join(SUITE, "moving_average", "task.json")
    assert subprocess.run([AGENTENV, "validate", task], capture_output=True, text=True).returncode == 0
    bare = subprocess.run([AGENTENV, "validate", task], capture_output=True, text=True,
                          env={**os.environ, "AGENTENV_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert bare.returncode != 0 and "unknown reward model 'readability'" in bare.stdout + bare.stderr


def test_a_checkpoint_option_is_read_beside_the_task_and_a_wrong_one_is_refused(tmp_path):
    folder = tmp_path / "task"
    shutil.copytree(os.path.join(SUITE, "moving_average"), folder)
    shutil.copy(BUNDLED_CHECKPOINT, folder / "mine.pt")
    doc = json.loads((folder / "task.json").read_text())
    doc["reward_logic"]["rules"][1]["options"] = {"checkpoint": "mine.pt", "aggregate": "mean"}
    (folder / "task.json").write_text(json.dumps(doc))
    env = agentenv.CodingEnv(str(folder / "task.json"))
    try:
        env.reset()
        _, reward, _, _, info = env.step(_read("rm.readable.moving_average", "solution"))
        assert info["success"] and reward > 0.9
        doc["reward_logic"]["rules"][1]["options"] = {"checkpoint": "missing.pt"}
        (folder / "task.json").write_text(json.dumps(doc))
    finally:
        env.close()
    env = agentenv.CodingEnv(str(folder / "task.json"))
    try:
        env.reset()
        with pytest.raises(CheckpointError, match="missing.pt' does not exist"):
            env.step(_read("rm.readable.moving_average", "solution"))
    finally:
        env.close()


def test_options_are_checked_with_the_fix():
    with pytest.raises(ReadabilityOptionsError, match="no option 'checkpont'; did you mean 'checkpoint'"):
        check_options({"checkpont": "x.pt"})
    with pytest.raises(ReadabilityOptionsError, match="aggregate: 'min' or 'mean'"):
        check_options({"aggregate": "max"})
    with pytest.raises(ReadabilityOptionsError, match="gate"):
        check_options({"gate": {"metric": 3}})
    assert check_options({"gate": None})["gate"] is None


# ------------------------------------------------------------------ what the agent could try

@pytest.mark.parametrize("how", ATTACKS)
def test_content_that_is_not_code_does_not_lift_messy_code(scorer, how):
    messy = [MESSY, transforms.degrade_all(READABLE, random.Random(2)),
             transforms.rename(_read("rm.readable.top_words", "solution").split("\n\n\n", 1)[1], random.Random(3))]
    for code in messy:
        attacked = attack(code, how)
        assert attacked is not None and transforms.parse_function(attacked) is not None
        # what any one-line docstring would earn: a docstring counts once, whatever it says or how long
        documented = attack(code, "one_line_docstring")
        plain, hit, docstring, good = scorer.score_snippets([code, attacked, documented, READABLE])
        if how in ("docstring_stuffing", "string_statements"):
            assert hit == pytest.approx(docstring, abs=1e-6), (how, hit, docstring)
        else:
            assert hit <= plain + 0.05, (how, plain, hit)
        assert hit < good


def test_a_tidy_function_appended_lifts_nothing_and_bounds_score_zero(scorer):
    padded = MESSY + "\n\n" + READABLE.replace("running_totals", "unused_helper")
    assert scorer.score_files({"a.py": padded}).total <= scorer.score_files({"a.py": MESSY}).total + 1e-9
    assert scorer.score_files({"a.py": MESSY, "b.py": READABLE}).total == pytest.approx(
        scorer.score_files({"a.py": MESSY}).total)
    assert scorer.score_files({"a.py": READABLE, "big.py": b"x = 1\n" * (MAX_FILE_BYTES // 6 + 1)}).total == 0.0
    assert scorer.score_files({"a.py": READABLE, "bad.py": b"\xff\xfe"}).total == 0.0
    assert scorer.score_files({"a.py": READABLE, "broken.py": "def f(:\n"}).total == 0.0
    only_comments = "# " + "wonderful code " * 50 + "\n"
    assert scorer.score_files({"a.py": only_comments}).total == 0.0


def test_only_the_python_files_the_agent_changed_are_scored():
    model = agentenv.registry().reward_models["readability"]
    task = agentenv.load_task(os.path.join(SUITE, "moving_average", "task.json"))
    passing = ({"test_pass_rate": 1.0},)
    pristine = _read("rm.readable.moving_average", "workspace")

    def view(files, runs=passing):
        return agentenv.EpisodeView(task, files, {}, runs)
    assert model.score(view({"moving_average.py": pristine.encode()}), {}) == 0.0  # unchanged
    assert model.score(view({"notes.md": b"# readable!"}), {}) == 0.0
    assert model.score(view({"moving_average.py": READABLE.encode()}), {}) > 0.0
    assert model.score(view({"moving_average.py": READABLE.encode()}, ({"test_pass_rate": 0.5},)), {}) == 0.0
    assert model.score(view({"moving_average.py": READABLE.encode()}, ({"test_pass_rate": 0.5},)), {"gate": None}) > 0
    unchanged_all = model.score(view({"moving_average.py": pristine.encode()}), {"files": "all"})
    assert 0.0 < unchanged_all < model.score(view({"moving_average.py": READABLE.encode()}), {})


# ------------------------------------------------------------------ failing never beats passing

def _reference_runs(task_id):
    env = gym.make(f"agentenv/{task_id}-v0")
    try:
        env.reset()
        _, _, _, _, info = env.step(_read(task_id, "solution"))
        passing = [dict(info["metrics"])]
        env.reset()
        _, _, _, _, info = env.step(_read(task_id, "workspace"))
        return env.unwrapped.task, passing, [dict(info["metrics"])]
    finally:
        env.close()


def test_the_suite_passes_the_dominance_check_and_bad_rules_fail_it():
    task, passing, failing = _reference_runs("rm.readable.moving_average")
    check = check_dominance(task, passing, [failing])
    assert check.ok and check.passing_floor == pytest.approx(0.9) and check.failing_ceiling == 0.0, check
    doc = task.to_json()
    rules = doc["reward_logic"]["rules"]
    rules[0].update(scoring="linear")
    rules[1].update(weight=0.3, options={"gate": None})
    doc["reward_logic"]["success_threshold"] = 0.5
    folder = os.path.dirname(task.source)
    linear = agentenv.parse_task(doc, base_dir=folder)
    check = check_dominance(linear, passing, [failing])
    assert not check.ok and "fails one test" in check.message and check.failing_ceiling > check.passing_floor
    rules[0].update(scoring="step")
    rules[1].update(weight=0.1)
    doc["reward_logic"]["success_threshold"] = 1.0
    greedy = check_dominance(agentenv.parse_task(doc, base_dir=folder), passing, [failing])
    assert not greedy.ok and "only with the reward models' help" in greedy.message
    assert one_test_short([{"tests_total": 4, "tests_passed": 4, "test_pass_rate": 1.0}])[0]["test_pass_rate"] == 0.75
    assert check_dominance(agentenv.load_task(os.path.join(SUITE, "top_words", "task.json")), passing).ok


@pytest.mark.slow
def test_the_suite_passes_every_audit_check(tmp_path):
    """`agentenv audit --strict`: no hacking probe scores (the gate keeps readability at 0 for code
    that fails its tests), the unchanged workspace scores 0, the scores are deterministic, no failing
    episode beats the reference (reward_models). The reference succeeds with 0.9 + 0.1 x readability
    (the reference check leaves fuzzy rules out of its full marks)."""
    report = tmp_path / "audit.json"
    proc = subprocess.run([AGENTENV, "audit", "rm.readable", "--runs", "2", "--strict", "--json", str(report)],
                          capture_output=True, text=True, timeout=1200)
    assert report.exists(), proc.stderr[-2000:]
    for task in json.loads(report.read_text())["tasks"]:
        status = {c["name"]: c["status"] for c in task["checks"]}
        # the duration check compares with this host's speed, which a loaded machine changes
        assert {n: s for n, s in status.items() if n != "duration"} == dict.fromkeys(
            ["schema", "reference", "stability", "trivial", "hacking", "gates", "reward_models", "determinism", "budget",
             "leakage"], "pass"), status
        reference = next(c for c in task["checks"] if c["name"] == "reference")
        assert len(reference["evidence"]["scores"]) == 2
        assert all(0.9 < s < 1.0 for s in reference["evidence"]["scores"])
