"""The agentenv plugin: the ``readability`` reward model, ``agentenv rm``, the ``rm.readable`` suite.

Nothing heavy is imported here: this module loads on every ``import agentenv``; torch loads when
a readability rule first scores, or when ``agentenv rm`` runs."""

from __future__ import annotations

import os

from agentenv import hookimpl

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")


@hookimpl
def agentenv_add_reward_models(registry) -> None:
    from .reward import ReadabilityRewardModel

    registry.add_reward_model(ReadabilityRewardModel())


@hookimpl
def agentenv_add_task_suites(registry) -> None:
    registry.add_suite(os.path.join(SUITES_DIR, "readable"))


@hookimpl
def agentenv_add_cli_commands(registry) -> None:
    from . import cli

    registry.add_command("rm", "the readability reward model: build preference pairs, train, evaluate, score files",
                         cli.configure, cli.run)
