"""The composite reward: weighted rules over the metrics of an episode's scored runs.

For each rule:

1. every scored run that produced the rule's metric contributes its value, unless the rule has a
   ``gate`` and that run fails it (the gate metric missing counts as failing), so that, say, a
   speed rule gated on ``test_pass_rate >= 1`` earns nothing for a fast empty program;
2. the values are aggregated (``max``, ``min``, ``mean``, ``last``, ``first``);
3. the aggregate is scored into [0, 1]:

   ======================  ==============================  ===========================
   direction               ``scoring: linear`` (default)   ``scoring: step``
   ======================  ==============================  ===========================
   higher, threshold T     min(1, v / T)                   1 if v >= T else 0
   higher, no threshold    v clamped to [0, 1]             1 if v >= 1 else 0
   lower, threshold T      max(0, 1 - v / T)               1 if v <= T else 0
   ======================  ==============================  ===========================

   no value at all scores 0.

A ``reward_model`` rule scores the model's value in [0, 1]; with a ``gate``, only when every scored
run that reports the gate's metric passes it (and one does).

The composite is the weighted sum of rule scores; with weights summing to 1 it lies in [0, 1].
Dense rewards are the change of the composite after each step (they telescope to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ._extension import MetricInfo
from ._spec import RewardLogic, RewardRule


@dataclass(frozen=True)
class RuleScore:
    label: str
    weight: float
    score: float
    value: float | None
    gated_out: int = 0  # runs excluded by the gate

    @property
    def contribution(self) -> float:
        return self.weight * self.score

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.label, "weight": self.weight, "score": self.score,
                "contribution": self.contribution, "gated_out": self.gated_out}


@dataclass(frozen=True)
class RewardResult:
    total: float
    rules: tuple[RuleScore, ...]
    success: bool

    def breakdown(self) -> dict[str, dict[str, Any]]:
        return {f"{i}:{r.label}": r.to_json() for i, r in enumerate(self.rules)}


def _aggregate(values: Sequence[float], how: str) -> float:
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "mean":
        return sum(values) / len(values)
    if how == "first":
        return values[0]
    return values[-1]


def _passes(gate, metrics: Mapping[str, Any]) -> bool:
    value = metrics.get(gate.metric)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
        return False
    return (gate.min is None or value >= gate.min) and (gate.max is None or value <= gate.max)


def _episode_passes(gate, runs: Sequence[Mapping[str, Any]]) -> bool:
    """A reward model scores the whole episode, so its gate holds the whole episode to it: every
    scored run that reports the gate's metric passes, and at least one does (a failing solution
    never earns a fuzzy bonus)."""
    reported = [m for m in runs if gate.metric in m]
    return bool(reported) and all(_passes(gate, m) for m in reported)


def score_value(value: float, info: MetricInfo | None, rule: RewardRule) -> float:
    lower = info is not None and info.direction == "lower"
    t = rule.threshold
    if math.isnan(value):
        return 0.0
    if lower:
        if t is None:  # refused at load time; kept total for direct callers
            return 1.0 if value <= 0 else 0.0
        return (1.0 if value <= t else 0.0) if rule.scoring == "step" else max(0.0, min(1.0, 1.0 - value / t))
    if t is None:
        t = info.bound if info is not None and info.bound else 1.0
    if rule.scoring == "step":
        return 1.0 if value >= t else 0.0
    return max(0.0, min(1.0, value / t))


def score_rule(rule: RewardRule, runs: Sequence[Mapping[str, Any]], info: MetricInfo | None) -> RuleScore:
    values, gated = [], 0
    for metrics in runs:
        value = metrics.get(rule.metric)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if rule.gate is not None and not _passes(rule.gate, metrics):
            gated += 1
            continue
        values.append(float(value))
    if not values:
        return RuleScore(rule.label, rule.weight, 0.0, None, gated)
    agg = _aggregate(values, rule.aggregation)
    return RuleScore(rule.label, rule.weight, score_value(agg, info, rule), agg, gated)


def compute_reward(logic: RewardLogic, runs: Sequence[Mapping[str, Any]], metric_info: Mapping[str, MetricInfo],
                   model_scores: Mapping[int, float] | None = None) -> RewardResult:
    """The composite reward over *runs* (the metrics of each scored run, in order).

    ``model_scores`` maps the index of each ``reward_model`` rule to the model's score in [0, 1].
    """
    scores = []
    for i, rule in enumerate(logic.rules):
        if rule.reward_model is not None:
            s = float((model_scores or {}).get(i, 0.0))
            s = 0.0 if math.isnan(s) else max(0.0, min(1.0, s))
            if rule.gate is not None and not _episode_passes(rule.gate, runs):
                scores.append(RuleScore(rule.label, rule.weight, 0.0, s, gated_out=len(runs)))
                continue
            scores.append(RuleScore(rule.label, rule.weight, s, s))
        else:
            scores.append(score_rule(rule, runs, metric_info.get(rule.metric)))
    total = sum(s.contribution for s in scores)
    weight = sum(r.weight for r in logic.rules)
    success = bool(runs) and weight > 0 and total >= logic.success_threshold * weight - 1e-9
    return RewardResult(total, tuple(scores), success)
