"""Built-in LLM tools: ``agentenv export RUN --format chat``, ``agentenv reverify`` and the ``rubric``
reward model. Uses only agentenv's public API (it could leave the wheel as its own distribution)."""

from __future__ import annotations

import agentenv

from . import export, reverify
from .rubric import RubricJudge


@agentenv.hookimpl
def agentenv_add_exporters(registry) -> None:
    registry.add_exporter("chat", "an eval run (or trajectory JSONL) as chat-format JSONL for SFT and rejection "
                                  "sampling", export.configure, export.run)


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("reverify", "recompute the rewards of stored trajectories (a changed rule or a fixed task) "
                                     "without running the policy again", reverify.configure, reverify.run)


@agentenv.hookimpl
def agentenv_add_reward_models(registry) -> None:
    registry.add_reward_model(RubricJudge())
