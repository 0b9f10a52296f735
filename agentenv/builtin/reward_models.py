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
            ref, text = want.decode("utf-8", "replace"), episode.files.get(path, b"").decode("utf-8", "replace")
            # (the match costs len(ref) x len(text): a solution file of 8 MB held the host for minutes,
            # red team, stop 36. Matched within twice the reference's length, the ratio is at most the
            # whole text's, whose length still counts: a longer text can only score less)
            seen = text[:2 * len(ref) + 1000]
            matched = sum(block.size for block in difflib.SequenceMatcher(None, ref, seen, autojunk=False).get_matching_blocks())
            ratios.append(2.0 * matched / (len(ref) + len(text)) if ref or text else 1.0)
        return sum(ratios) / len(ratios)


@agentenv.hookimpl
def agentenv_add_reward_models(registry) -> None:
    registry.add_reward_model(ReferenceSimilarity())
