"""Can a reward model make a failing solution beat a passing one?

A fuzzy reward model is a shaping signal beside the tests; it must never outweigh them. For a
task with ``reward_model`` rules, :func:`check_dominance` compares

* the *floor* of a passing solution: its real scored runs, every reward model scoring 0, and
* the *ceiling* of each failing solution: its scored runs, every reward model at the most it can
  give those runs (1, unless the model says less through an optional ``max_score(runs, options)``
  method: the readability model gives 0 to runs that fail its gate).

Failing solutions are the ones given, plus the strongest one derivable from the passing runs: the
same runs with exactly one test failing (every other metric as good as the passing solution's).
The check fails when any failing ceiling reaches the passing floor, when a failing solution could
reach ``success``, or when the passing solution reaches ``success`` only with the reward models'
help. It uses only agentenv's public API, so the audit can call it (or adopt it) as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import agentenv

Runs = Sequence[Mapping[str, Any]]
_EPS = 1e-9


@dataclass(frozen=True)
class DominanceCheck:
    ok: bool
    message: str
    passing_floor: float | None = None
    failing_ceiling: float | None = None
    reward_model_weight: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def one_test_short(runs: Runs) -> list[dict[str, Any]] | None:
    """*runs* with exactly one more test failing in the last run that counts tests (None: no tests)."""
    out = [dict(r) for r in runs]
    for run in reversed(out):
        total = run.get("tests_total")
        if isinstance(total, int) and total >= 1 and isinstance(run.get("tests_passed"), int):
            passed = max(0, min(total, run["tests_passed"]) - 1)
            run.update(tests_passed=passed, tests_failed=int(run.get("tests_failed") or 0) + 1,
                       test_pass_rate=passed / total)
            return out
    return None


def _model_ceiling(rule: Any, runs: Runs) -> float:
    model = agentenv.registry().reward_models.get(rule.reward_model)
    bound = getattr(model, "max_score", None)
    if bound is None:
        return 1.0
    return max(0.0, min(1.0, float(bound(runs, rule.options))))


def check_dominance(task: agentenv.TaskSpec, passing_runs: Runs, failing: Sequence[Runs] = ()) -> DominanceCheck:
    """See the module docstring. *passing_runs*: the metrics of each scored run of a passing
    solution (the reference's); *failing*: those of failing solutions, one sequence each."""
    rules = task.reward.rules
    model_rules = [i for i, r in enumerate(rules) if r.reward_model is not None]
    weight = sum(rules[i].weight for i in model_rules)
    if not model_rules:
        return DominanceCheck(True, "no reward-model rule")
    metrics = agentenv.registry().metrics
    floor = agentenv.compute_reward(task.reward, passing_runs, metrics, {i: 0.0 for i in model_rules})
    with_models = agentenv.compute_reward(task.reward, passing_runs, metrics, {i: 1.0 for i in model_rules})
    if not with_models.success:
        return DominanceCheck(False, "the passing solution does not reach success even with every reward model at 1: "
                              "it is not a passing solution", floor.total, None, weight)
    if not floor.success:
        return DominanceCheck(False, f"the passing solution reaches success only with the reward models' help "
                              f"(composite {floor.total:.3f} with them at 0, below success_threshold "
                              f"{task.reward.success_threshold} of the weights): lower success_threshold to "
                              "the tests' share of the weight", floor.total, None, weight)
    candidates: list[tuple[str, Runs]] = [(f"failing solution {k + 1}", runs) for k, runs in enumerate(failing)]
    short = one_test_short(passing_runs)
    if short is not None:
        candidates.append(("a solution that fails one test and is otherwise as good", short))
    worst: tuple[float, str] | None = None
    for label, runs in candidates:
        scores = {i: _model_ceiling(rules[i], runs) for i in model_rules}
        result = agentenv.compute_reward(task.reward, runs, metrics, scores)
        if result.total >= floor.total - _EPS or result.success:
            what = "reaches success" if result.success else "scores at least as much as the passing one"
            return DominanceCheck(
                False, f"{label} {what} ({result.total:.3f} with the reward models at their most, against "
                f"{floor.total:.3f} for the passing solution with them at 0): score the tests as a step "
                "(\"scoring\": \"step\", \"threshold\": 1.0), gate the reward models on the tests, or give them less "
                f"than {max(0.0, weight - (result.total - floor.total)):.3f} of weight in all",
                floor.total, result.total, weight)
        if worst is None or result.total > worst[0]:
            worst = (result.total, label)
    if worst is None:
        return DominanceCheck(True, f"no failing solution to compare (no test counts in the runs); floor "
                              f"{floor.total:.3f}", floor.total, None, weight)
    return DominanceCheck(True, f"a passing solution scores at least {floor.total:.3f}, a failing one at most "
                          f"{worst[0]:.3f} ({worst[1]})", floor.total, worst[0], weight)
