"""The agentenv plugin: training suites, the ``sb3`` agent, ``agentenv train`` / ``train-text``,
and Gymnasium ids for the wrapped environments."""

from __future__ import annotations

import functools
import os

import gymnasium as gym

from agentenv import hookimpl

from . import cli  # light: its heavy imports are inside the commands, so the parser is built without torch

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")
EDIT_CHOICE_ID = "agentenv_sb3/EditChoice-v0"
TOKENS_ID = "agentenv_sb3/TokenSynthesis-v0"

if EDIT_CHOICE_ID not in gym.registry:
    gym.register(id=EDIT_CHOICE_ID, entry_point="agentenv_sb3.edit_choice:EditChoiceEnv")
if TOKENS_ID not in gym.registry:
    gym.register(id=TOKENS_ID, entry_point="agentenv_sb3.tokens:TokenSynthesisEnv")


@hookimpl
def agentenv_add_task_suites(registry) -> None:
    for name in ("repair", "synth"):
        registry.add_suite(os.path.join(SUITES_DIR, name))


@hookimpl
def agentenv_add_agents(registry) -> None:
    registry.add_agent("sb3", _make_sb3_agent, "a policy trained by `agentenv train` (sb3:DIR/model.zip)")
    registry.add_agent("sb3-best", functools.partial(_make_sb3_agent, best=True), "the programs a token run of `agentenv train` found, the "
                       "policy's own elsewhere (sb3-best:DIR/model.zip)")


@hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("train", "train a stable-baselines3 policy on a suite (edit-choice or token wrapper)",
                         cli.configure_train, cli.run_train)
    registry.add_command("train-text", "REINFORCE with a group baseline: a tiny character-level model on "
                         "single-shot tasks", cli.configure_train_text, cli.run_train_text)


def _make_sb3_agent(arg, task, mode, best=False):
    # imported on use: the agent needs torch, which every agentenv command would otherwise import
    from .agent import make_sb3_agent

    return make_sb3_agent(arg, task, mode, best=best)
