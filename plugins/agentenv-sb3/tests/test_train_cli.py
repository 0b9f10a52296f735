"""``agentenv train`` as a user runs it (issue 18): it says how many steps it really runs, and the
random-policy baseline has a flag and a progress bar."""

import io
import os
import signal
import subprocess
import sys

import gymnasium as gym
import pytest

from agentenv_sb3 import random_baseline
from agentenv_sb3.cli import _bar
from agentenv_sb3.train import ALGO_DEFAULTS, steps_run

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")


def test_train_says_that_steps_round_up_to_whole_rollouts(tmp_path):
    proc = subprocess.Popen([AGENTENV, "train", "--steps", "96", "--envs", "2", "--baseline-episodes", "0",
                             "--device", "cpu", "--no-progress", "--out", str(tmp_path)],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True)
    lines = []
    try:
        for line in proc.stderr:  # what the user reads before training starts; the run itself is not needed
            lines.append(line)
            if line.startswith("training "):
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert ("--steps 96 is not a whole number of PPO rollouts (64 steps x 2 env(s) = 128): training runs 128 steps\n"
            in lines), lines
    assert lines[-1].startswith("training PPO on sb3.repair (6 tasks, wrapper edit-choice) for 128 steps"), lines


@pytest.mark.parametrize("algo,steps,envs,runs", [("ppo", 96, 2, 128), ("a2c", 20, 2, 32), ("dqn", 10, 2, 16),
                                                  ("ppo", 128, 2, 128)])
def test_the_announced_count_is_what_sb3_runs(algo, steps, envs, runs, tmp_path):
    import stable_baselines3 as sb3
    import torch
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import configure

    torch.set_num_threads(1)
    params = dict(ALGO_DEFAULTS[algo]["edit-choice"])
    model = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[algo](
        "MlpPolicy", make_vec_env("CartPole-v1", n_envs=envs, seed=0), seed=0, device="cpu", **params)
    model.set_logger(configure(str(tmp_path), []))  # (SB3's default makes a folder in /tmp that nothing removes)
    model.learn(steps)
    assert steps_run(algo, params, steps, envs) == model.num_timesteps == runs


def test_the_baseline_reports_progress_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    env = gym.make("CartPole-v1")
    random_baseline(env, 3, tick=_bar("random-policy baseline"))
    assert screen.getvalue().endswith("\rrandom-policy baseline [" + "#" * 30 + "] 3/3\n")
    assert "] 1/3" in screen.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal (a log): no bar
    assert _bar("random-policy baseline") is None
