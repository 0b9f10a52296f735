"""Every bundled task: the reference agent scores full marks and the no-op agent scores 0, in every mode
the task supports (single_shot when it has a placeholder step, agentic always).

The first task of each suite runs by default; the rest are marked slow (CI runs them all).
"""

from __future__ import annotations

import json
import os

import pytest

from agentenv import CodingEnv, installed_suites, load_task, make_agent, run_episode
from agentenv._cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "tasks")


def _bundled_suites():
    return sorted((s for s in installed_suites().values() if os.path.abspath(s.path).startswith(TASKS + os.sep)),
                  key=lambda s: s.name)


def _cases():
    cases = []
    for suite in _bundled_suites():
        for i, path in enumerate(suite.task_files):
            task = load_task(path, suite=suite.name)
            for mode in (["single_shot"] if task.single_shot_path else []) + ["agentic"]:
                marks = () if i == 0 else (pytest.mark.slow,)
                cases.append(pytest.param(path, mode, id=f"{task.task_id}-{mode}", marks=marks))
    return cases


def test_every_suite_folder_is_installed_and_has_tasks():
    folders = sorted(d for d in os.listdir(TASKS) if os.path.exists(os.path.join(TASKS, d, "suite.json")))
    assert [s.name for s in _bundled_suites()] == folders
    assert {"examples", "pybugs", "humaneval_mini", "synth_inflection"} <= set(folders)
    assert all(s.task_files for s in _bundled_suites())
    assert len(next(s for s in _bundled_suites() if s.name == "pybugs").task_files) >= 40


def test_list_json_shows_every_task_of_every_suite(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    listed = {(r["suite"], os.path.abspath(r["path"])) for r in rows}
    for suite in _bundled_suites():
        for path in suite.task_files:
            task = load_task(path)
            assert (suite.name, os.path.abspath(path)) in listed
            assert {"env_id": task.env_id, "task_id": task.task_id} == \
                {k: v for r in rows if os.path.abspath(r["path"]) == os.path.abspath(path) for k, v in r.items()
                 if k in ("env_id", "task_id")}


def test_validate_passes_on_the_tasks_folder(capsys):
    assert main(["validate", TASKS]) == 0
    assert ", 0 invalid" in capsys.readouterr().out


@pytest.mark.parametrize("path, mode", _cases())
def test_reference_scores_full_marks_and_noop_scores_zero(path, mode):
    task = load_task(path)
    env = CodingEnv(task, mode=mode)
    try:
        ref = run_episode(env, make_agent("reference", task, mode))
        assert not ref.reward_masked, ref.infra_error
        assert ref.score == 1.0 and ref.success, ref.info.get("reward_breakdown")
        noop = run_episode(env, make_agent("noop", task, mode))
        assert not noop.reward_masked, noop.infra_error
        assert noop.score == 0.0 and not noop.success, noop.info.get("reward_breakdown")
    finally:
        env.close()
