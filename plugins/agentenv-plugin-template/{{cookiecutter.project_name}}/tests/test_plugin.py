"""The plugin in real episodes: installed, it extends agentenv's environments, schema and CLI."""

import json
import os
import subprocess
import sys

import gymnasium as gym
import pytest

import agentenv

TASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "task", "task.json")
FIX = {"action": "replace_text", "path": "greet.py", "old": 'return "Hello!"', "new": 'return f"Hello, {name}!"'}
TIDY = {"action": "replace_text", "path": "greet.py", "old": "    # TODO: greet by name\n",
        "new": '    """A greeting for *name*."""\n'}


@pytest.fixture
def env():
    env = gym.make("agentenv/Task-v0", task=TASK)
    yield env
    env.close()


def test_the_plugin_registers_its_four_parts():
    registry = agentenv.registry()
    assert "replace_text" in registry.actions and "todo_count" in registry.metrics
    assert "docstring_share" in registry.reward_models and "tap_file" in registry.report_formats
    schema = json.dumps(agentenv.task_schema())
    assert "replace_text" in schema and "todo_count" in schema and "docstring_share" in schema


def test_the_task_validates_without_warnings():
    out = subprocess.run([sys.executable, "-m", "agentenv", "validate", TASK], capture_output=True, text=True)
    assert out.returncode == 0 and "1 valid, 0 invalid" in out.stdout and "warning" not in out.stderr, out.stderr


def test_fixing_tidying_and_documenting_earns_every_rule(env):
    env.reset(seed=0)
    obs, *_ = env.step(FIX)
    assert obs["output"] == "replaced 1 occurrence in greet.py"
    env.step(TIDY)
    _, reward, terminated, _, info = env.step({"action": "submit"})
    assert terminated and reward == pytest.approx(1.0) and info["success"]
    assert info["metrics"]["test_outcomes"] == {"greets by name": "passed", "returns text": "passed"}
    assert info["metrics"]["todo_count"] == 0


def test_a_fix_that_leaves_the_todo_earns_only_the_checks(env):
    env.reset(seed=0)
    env.step(FIX)
    _, reward, _, _, info = env.step({"action": "submit"})
    assert reward == pytest.approx(0.6) and info["metrics"]["todo_count"] == 1
    assert info["reward_breakdown"]["1:todo_count"]["score"] == 0.0


def test_removing_the_todo_from_broken_code_earns_nothing(env):
    env.reset(seed=0)
    env.step({**TIDY, "new": ""})  # no TODO, but still wrong: the gate holds the todo rule back
    _, reward, _, _, info = env.step({"action": "submit"})
    assert reward == 0.0 and info["metrics"]["test_pass_rate"] == 0.5
    assert info["metrics"]["error"]["test"] == "greets by name"


def test_a_replacement_that_does_not_fit_is_refused_and_the_episode_goes_on(env):
    env.reset(seed=0)
    _, _, terminated, _, info = env.step({**FIX, "old": "Goodbye"})
    assert not terminated and "occurs 0 times" in info["action_error"]
    _, _, _, _, info = env.step({**FIX, "path": "../../etc/passwd"})
    assert "outside the workspace" in info["action_error"]
