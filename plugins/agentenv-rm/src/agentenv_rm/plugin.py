"""The agentenv plugin: the ``readability`` reward model, ``agentenv rm``, the ``rm.readable`` suite.

Nothing heavy is imported here: this module loads on every ``import agentenv``; torch loads when
a readability rule first scores, or when ``agentenv rm`` runs."""

from __future__ import annotations

import os

from typing import Any, Mapping

from agentenv import EpisodeView, RewardModel, hookimpl

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")


class ReadabilityRewardModel(RewardModel):
    """See :mod:`agentenv_rm.reward`. Defined here, loaded on use: this module is imported while
    ``import agentenv`` runs, before the rest of agentenv_rm can import agentenv."""

    name = "readability"
    description = ("readability (0..1) of the Python the agent wrote, by a model trained on code people wrote "
                   "(agentenv-rm); 0 unless the tests pass")

    def score(self, episode: EpisodeView, options: Mapping[str, Any]) -> float:
        from .reward import score_episode

        return score_episode(episode, options)

    def max_score(self, runs: Any, options: Mapping[str, Any]) -> float:
        """The most this model can give a solution whose scored runs are *runs* (read by
        :func:`agentenv_rm.dominance.check_dominance`): 0 when they fail its gate."""
        from .reward import max_score

        return max_score(runs, options)


@hookimpl
def agentenv_add_reward_models(registry) -> None:
    registry.add_reward_model(ReadabilityRewardModel())


@hookimpl
def agentenv_add_task_suites(registry) -> None:
    registry.add_suite(os.path.join(SUITES_DIR, "readable"))


@hookimpl
def agentenv_add_cli_commands(registry) -> None:
    from . import cli

    registry.add_command("rm", "the readability reward model: build preference pairs, train, evaluate, score files",
                         cli.configure, cli.run)
