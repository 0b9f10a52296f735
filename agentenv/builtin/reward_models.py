"""Built-in reward model: similarity of the solution to the reference (a fuzzy, shaping signal)."""

from __future__ import annotations

import difflib

import agentenv
from agentenv import RewardModel


class ReferenceSimilarity(RewardModel):
    """Mean ``difflib`` ratio between the reference files and the same files in the final workspace.

    A shaping signal only: a correct solution can differ from the reference, so give it a small weight.
    """

    name = "reference_similarity"
    description = "textual similarity (0..1) of the solved files to the reference solution"

    def score(self, episode, options) -> float:
        if not episode.reference:
            return 0.0
        ratios = []
        for path, want in episode.reference.items():
            got = episode.files.get(path, b"")
            ratios.append(difflib.SequenceMatcher(None, want.decode("utf-8", "replace"), got.decode("utf-8", "replace"),
                                                  autojunk=False).ratio())
        return sum(ratios) / len(ratios)


@agentenv.hookimpl
def agentenv_add_reward_models(registry) -> None:
    registry.add_reward_model(ReferenceSimilarity())
