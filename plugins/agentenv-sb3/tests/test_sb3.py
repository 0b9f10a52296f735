"""agentenv-sb3: the wrappers on real sandboxes, SB3/Gymnasium checkers, training that learns, the
sb3 agent, the text-policy loop, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

import agentenv
from agentenv_sb3 import (VOCAB, EditChoiceEnv, TokenSynthesisEnv, TrainingError, random_baseline, resolve_device,
                          task_candidates, train, train_text_policy)
from agentenv_sb3.tokens import expression, open_slots, parse_tokens
from agentenv_sb3.train import risk_seeking_advantages

warnings.filterwarnings("ignore", category=UserWarning)
AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")


@pytest.fixture(scope="module")
def repair():
    env = EditChoiceEnv(suite="sb3.repair")
    yield env
    env.close()


def play_tokens(env, task_id, text):
    env.reset(options={"task_id": task_id})
    for tok in text.split():
        obs, reward, terminated, truncated, info = env.step(VOCAB.index(tok))
        if terminated:
            return reward, info
    raise AssertionError(f"the episode did not end after {text!r}")


# ------------------------------------------------------------------ suites and wrappers

def test_training_suites_are_installed_and_valid():
    suites = agentenv.installed_suites()
    assert len(suites["sb3.repair"].load()) == 6 and len(suites["sb3.synth"].load()) == 12
    assert "agentenv/sb3.repair.pricing-v0" in gym.registry


def test_edit_choice_features_come_from_real_runs(repair):
    obs, info = repair.reset(options={"task_id": "sb3.repair.mean"})
    assert obs.shape == repair.observation_space.shape and info["pass_rate"] == pytest.approx(1 / 3)
    assert info["error_type"] == "AssertionError" and len(info["failing_tests"]) == 2
    names = [c.name for c in repair.candidates["sb3.repair.mean"]]
    obs, reward, terminated, truncated, info = repair.step(names.index("true-div"))
    assert info["error_type"] == "ZeroDivisionError" and not terminated  # the empty-list test now crashes
    obs, reward, terminated, truncated, info = repair.step(names.index("reference"))
    assert terminated and info["success"] and reward == pytest.approx(1 / 3)


def test_two_bug_task_needs_two_rounds_and_rewards_sum_to_the_score(repair):
    obs, info = repair.reset(options={"task_id": "sb3.repair.pricing"})
    names = [c.name for c in repair.candidates["sb3.repair.pricing"]]
    total = 0.0
    for name in ("tax-fix", "discount-fix"):
        obs, reward, terminated, truncated, info = repair.step(names.index(name))
        total += reward
    assert terminated and info["success"] and info["history"] == ["tax-fix", "discount-fix"]
    assert info["score"] == pytest.approx(total + 1 / 3)  # the start state scored 1/3


def test_edit_choice_truncates_after_rounds_and_pads_with_noops(repair):
    repair.reset(options={"task_id": "sb3.repair.clamp"})
    for _ in range(repair.rounds):
        obs, reward, terminated, truncated, info = repair.step(repair.k - 1)  # past the task's 6 candidates
    assert truncated and not terminated and info["candidate"] == "noop" and reward == 0.0


def test_candidates_are_generated_for_a_task_without_them():
    task = agentenv.load_task(gym.spec("agentenv/examples.fizzbuzz-v0").kwargs["task"])
    names = [c.name for c in task_candidates(task, 6)]
    assert "reference" in names and "noop" in names and len(names) == 6 and names[0] != "reference"


def test_bad_candidates_name_the_file_and_field(tmp_path):
    src = gym.spec("agentenv/sb3.repair.clamp-v0").kwargs["task"]
    doc = json.load(open(src))
    doc["metadata"]["candidates"][1] = {"name": "broken", "files": {"clamp.py": 3}}
    for folder in ("workspace", "solution"):  # a task's folders lie inside its own folder
        shutil.copytree(os.path.join(os.path.dirname(src), folder), tmp_path / folder)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(agentenv.TaskSpecError) as err:
        EditChoiceEnv(tasks=[str(path)])
    assert str(path) in str(err.value) and "/metadata/candidates/1/files" in str(err.value)
    with pytest.raises(agentenv.TaskSpecError, match="raise k"):
        EditChoiceEnv(tasks=[src], k=4)


def test_token_wrapper_scores_programs_with_the_tasks_reward():
    env = TokenSynthesisEnv(suite="sb3.synth")
    try:
        reward, info = play_tokens(env, "sb3.synth.square_plus", "+ * a a b")  # prefix order: a * a + b
        assert reward == 1.0 and info["success"] and "return (a * a) + b\n" in info["program"]
        assert env.found == {"sb3.synth.square_plus": info["program"]}
        reward, info = play_tokens(env, "sb3.synth.add", "a")  # complete at once; f(3, 0) == 3 passes: partial
        assert 0 < reward < 1 and not info["success"] and "return a\n" in info["program"]
        reward, info = play_tokens(env, "sb3.synth.reverse", "rev 1")  # runs, raises TypeError: no test passes
        assert 0 < reward < 0.2 and not info["success"]
        obs, _ = env.reset(options={"task_id": "sb3.synth.mod"})
        assert env.observation_space.contains(obs) and obs[-1] == [t.task_id for t in env.tasks].index("sb3.synth.mod")
        assert list(obs[:-1]) == [len(VOCAB)] * env.max_tokens
    finally:
        env.close()
    short = TokenSynthesisEnv(tasks=["agentenv/sb3.synth.add-v0"], max_tokens=2)
    try:  # the budget runs out with one operand open: it is filled with `a`
        reward, info = play_tokens(short, "sb3.synth.add", "+ b")
        assert "return b + a\n" in info["program"] and reward == 1.0
    finally:
        short.close()


def test_prefix_tokens_read_as_python_expressions():
    assert expression("+ * a a b".split()) == "(a * a) + b"
    assert expression("len + a b".split()) == "len(a + b)"
    assert expression("rev + a b".split()) == "(a + b)[::-1]"
    assert expression("== % a 2 0".split()) == "(a % 2) == 0"
    assert expression(["*"]) == "a * a"  # open slots filled
    assert open_slots("+ a".split()) == 1 and open_slots("+ a b".split()) == 0
    with pytest.raises(TrainingError, match="must be one of"):
        parse_tokens("a ** b")


def test_wrappers_pass_sb3_and_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for env in (EditChoiceEnv(tasks=["agentenv/sb3.repair.span-v0", "agentenv/examples.fizzbuzz-v0"]),
                TokenSynthesisEnv(tasks=["agentenv/sb3.synth.length-v0"])):
        try:
            sb3_check_env(env)
            gym_check_env(env, skip_render_check=True)
        finally:
            env.close()


def test_subproc_vec_env_runs_wrapped_envs_in_workers():
    import functools

    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from agentenv_sb3.train import make_wrapped_env

    fn = functools.partial(make_wrapped_env, "tokens", None, ["agentenv/sb3.synth.reverse-v0"], max_tokens=2)
    vec = make_vec_env(fn, n_envs=2, seed=0, vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": "forkserver"})
    try:
        vec.reset()
        _, _, dones, _ = vec.step(np.array([VOCAB.index("rev"), VOCAB.index("a")]))
        assert list(dones) == [False, True]  # a lone operand is a whole program
        _, rewards, dones, infos = vec.step(np.array([VOCAB.index("a"), VOCAB.index("b")]))
        assert dones.all() and rewards[0] == 1.0 and infos[0]["success"] and not infos[1]["success"]
    finally:
        vec.close()


def test_bad_inputs_are_clear_errors():
    with pytest.raises(agentenv.UnknownNameError, match="suite"):
        EditChoiceEnv(suite="sb3.nope")
    with pytest.raises(TrainingError, match="single-shot|model_generated_code"):
        TokenSynthesisEnv(tasks=["agentenv/sb3.repair.clamp-v0"])
    with pytest.raises(TrainingError, match="--algo"):
        train(algo="sac", steps=10)


# ------------------------------------------------------------------ training

def test_risk_seeking_keeps_each_tasks_best_episodes_only():
    # one env, 8 steps: episodes [0,2) task 0 return 0.3, [2,4) task 0 return 1.0, [4,5) task 1 return 0.5,
    # [5,7) task 1 return 0.2, [7,8) task 1 still running at the end of the rollout
    rewards = np.array([[0, .3, 0, 1.0, .5, 0, .2, 0]], dtype=np.float32).T
    starts = np.array([[1, 0, 1, 0, 1, 1, 0, 1]], dtype=np.float32).T
    tasks = np.array([[0, 0, 0, 0, 1, 1, 1, 1]]).T
    adv = risk_seeking_advantages(rewards, starts, np.array([False]), tasks, epsilon=0.5)
    # threshold per task = the median of its finished returns: 0.65 and 0.35
    assert np.allclose(adv[:, 0], [0, 0, .35, .35, .15, 0, 0, 0])
    # scores come in a few levels and tie at the quantile: the baseline is the group's mean, so the tied
    # episodes get nothing, the one better episode gets R - mean, and a group that all scored alike gets 0
    tied = np.array([[1.0, .5, .5, .5, .25, .25]], dtype=np.float32).T
    adv = risk_seeking_advantages(tied, np.ones_like(tied), np.array([True]), np.array([[0, 0, 0, 0, 1, 1]]).T,
                                  epsilon=0.5)
    assert np.allclose(adv[:, 0], [.375, 0, 0, 0, 0, 0])
    with pytest.raises(TrainingError, match="risk-seeking"):
        train(wrapper="tokens", algo="dqn", risk_seeking=0.1, steps=10)
    with pytest.raises(TrainingError, match="--elite"):
        train(wrapper="tokens", elite=-1, steps=10)


def test_token_training_records_its_search_and_the_sb3_agent_plays_the_program(tmp_path):
    out = str(tmp_path / "synth")
    tasks = ["sb3.synth.add", "sb3.synth.double"]
    suite = tmp_path / "suite"
    suite.mkdir()
    for task_id in tasks:  # a two-task suite of the bundled tasks, so that a short run is cheap
        src = os.path.dirname(gym.spec(f"agentenv/{task_id}-v0").kwargs["task"])
        shutil.copytree(src, suite / task_id.rsplit(".", 1)[1])
    (suite / "suite.json").write_text(json.dumps({"name": "two.synth", "version": "1.0.0",
                                                  "description": "two tasks", "tasks": ["*/task.json"]}))
    result = train(suite=str(suite), wrapper="tokens", steps=512, envs=2, out=out, seed=0, progress_bar=False,
                   random_episodes=20, checkpoints=0, tensorboard=False, plot=False, say=lambda line: None)
    meta = json.loads((tmp_path / "synth" / "train.json").read_text())
    assert meta["vocab"] == list(VOCAB) and meta["risk_seeking"] == 0.1 and meta["elite"] == 4
    assert set(result.programs_tried) == set(tasks)
    assert 0 < sum(result.programs_tried.values()) <= result.episodes
    assert set(result.found_in_training) <= set(tasks)

    task = agentenv.load_task(gym.spec("agentenv/sb3.synth.add-v0").kwargs["task"])
    agent = agentenv.make_agent(f"sb3:{result.model_path}", task, "single-shot")
    env = gym.make("agentenv/sb3.synth.add-v0")
    try:
        episode = agentenv.run_episode(env, agent, seed=0)
    finally:
        env.close()
    assert episode.success == (result.evaluation["per_task"]["sb3.synth.add"] == 1.0)

    # sb3-best plays what the search found, and the scored env runs it again: a right program passes,
    # a wrong one written into result.json does not (nothing is taken on trust)
    path = tmp_path / "synth" / "result.json"
    record = json.loads(path.read_text())
    record["found_in_training"] = {"sb3.synth.add": "def f(a, b):\n    return b + a\n",
                                   "sb3.synth.double": "def f(a, b):\n    return a + 2\n"}
    path.write_text(json.dumps(record))
    for task_id, passes in (("sb3.synth.add", True), ("sb3.synth.double", False)):
        env = gym.make(f"agentenv/{task_id}-v0")
        task = agentenv.load_task(gym.spec(f"agentenv/{task_id}-v0").kwargs["task"])
        try:
            episode = agentenv.run_episode(env, agentenv.make_agent(f"sb3-best:{result.model_path}", task,
                                                                    "single-shot"), seed=0)
        finally:
            env.close()
        assert episode.success is passes, task_id
    path.write_text("{}")
    with pytest.raises(TrainingError, match="found_in_training"):
        agentenv.make_agent(f"sb3-best:{result.model_path}", task, "single-shot")
    meta["vocab"] = meta["vocab"][:-1]
    (tmp_path / "synth" / "train.json").write_text(json.dumps(meta))
    with pytest.raises(TrainingError, match="vocabulary"):
        agentenv.make_agent(f"sb3:{result.model_path}", task, "single-shot")


def test_device_auto_resolves_to_what_torch_sees(capsys):
    import torch

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto") == expected
    assert f"device: {expected} (auto" in capsys.readouterr().out
    if not torch.cuda.is_available():
        with pytest.raises(TrainingError, match="no CUDA device"):
            resolve_device("cuda", say=None)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("repair"))
    result = train(suite="sb3.repair", wrapper="edit-choice", algo="ppo", steps=2500, envs=4, out=out, seed=0,
                   progress_bar=False, random_episodes=120, checkpoints=2, say=lambda line: None)
    return result


def test_ppo_learns_the_repair_suite_clearly_better_than_random(trained):
    # seeded, and the margin is wide: PPO reaches >= 0.9 on this budget, random stays near 0.25
    assert trained.random["success_rate"] < 0.4
    assert trained.evaluation["success_rate"] >= trained.random["success_rate"] + 0.3
    assert trained.curve[-1]["success_rate"] > trained.curve[0]["success_rate"]


def test_training_writes_model_logs_checkpoints_and_curve(trained):
    files = set(os.listdir(trained.out))
    assert {"model.zip", "train.json", "curve.csv", "progress.csv", "learning_curve.png", "result.json"} <= files
    assert os.listdir(os.path.join(trained.out, "checkpoints"))
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(os.path.join(trained.out, "tb")))
    with open(os.path.join(trained.out, "learning_curve.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_sb3_agent_plays_the_trained_policy_in_the_scored_env(trained):
    agent = agentenv.make_agent(f"sb3:{trained.model_path}", agentenv.load_task(
        gym.spec("agentenv/sb3.repair.words-v0").kwargs["task"]), "agentic")
    env = gym.make("agentenv/sb3.repair.words-v0", mode="agentic")
    try:
        result = agentenv.run_episode(env, agent, seed=0)
    finally:
        env.close()
    assert result.success == (trained.evaluation["per_task"]["sb3.repair.words"] == 1.0)
    with pytest.raises(TrainingError, match="sb3-best plays the programs a token run found"):
        agentenv.make_agent(f"sb3-best:{trained.model_path}", agentenv.load_task(
            gym.spec("agentenv/sb3.repair.words-v0").kwargs["task"]), "agentic")
    with pytest.raises(TrainingError, match="does not exist"):
        agentenv.make_agent("sb3:/nonexistent/model.zip", agent.task, "agentic")


def test_random_baseline_of_edit_choice_stays_low(repair):
    assert random_baseline(repair, 60, seed=3)["success_rate"] < 0.4


# ------------------------------------------------------------------ text policy and CLI

def test_text_policy_loop_runs_on_single_shot_envs_and_logs_reward_statistics(tmp_path):
    log = train_text_policy(tasks=["agentenv/sb3.synth.add-v0", "agentenv/sb3.synth.reverse-v0"], iterations=2,
                            group=4, max_len=6, device="cpu", out=str(tmp_path), say=None)
    assert len(log) == 4 and {row["task_id"] for row in log} == {"sb3.synth.add", "sb3.synth.reverse"}
    for row in log:
        assert 0.0 <= row["reward_mean"] <= row["reward_max"] <= 1.0 and np.isfinite(row["loss"])
    assert (tmp_path / "text_policy.csv").read_text().startswith("iteration,task_id,reward_mean")


def test_cli_train_appears_and_rejects_a_bad_wrapper():
    out = subprocess.run([AGENTENV, "train", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--wrapper" in out.stdout and "--device" in out.stdout
    bad = subprocess.run([AGENTENV, "train", "--wrapper", "letters"], capture_output=True, text=True)
    assert bad.returncode != 0 and "edit-choice" in bad.stderr
