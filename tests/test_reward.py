"""The composite reward engine: properties that must hold for any rule set."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentenv
from agentenv._spec import Gate, RewardLogic, RewardRule

pytestmark = pytest.mark.unit

METRICS = agentenv.registry().metrics

rule_st = st.builds(
    RewardRule,
    weight=st.floats(0, 1),
    metric=st.sampled_from(["test_pass_rate", "execution_time_ms", "peak_memory_mb", "tests_passed"]),
    aggregation=st.sampled_from(["max", "min", "mean", "last", "first"]),
    threshold=st.floats(1, 10_000),
    scoring=st.sampled_from(["linear", "step"]),
    gate=st.none() | st.just(Gate("test_pass_rate", min=1.0)),
)
run_st = st.fixed_dictionaries({
    "test_pass_rate": st.floats(0, 1), "execution_time_ms": st.floats(0, 20_000),
    "peak_memory_mb": st.floats(0, 4096), "tests_passed": st.integers(0, 50)})


def normalized(rules):
    total = sum(r.weight for r in rules)
    if total == 0:
        return None
    return tuple(RewardRule(**{**r.__dict__, "weight": r.weight / total}) for r in rules)


@settings(max_examples=300, deadline=None)
@given(st.lists(rule_st, min_size=1, max_size=5), st.lists(run_st, max_size=6))
def test_score_in_unit_interval_when_weights_sum_to_one(rules, runs):
    rules = normalized(rules)
    if rules is None:
        return
    result = agentenv.compute_reward(RewardLogic(rules), runs, METRICS)
    assert -1e-9 <= result.total <= 1 + 1e-9
    assert result.total == pytest.approx(sum(r.contribution for r in result.rules))


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 20_000), st.sampled_from(["linear", "step"]),
       st.sampled_from(["max", "min", "mean", "last", "first"]))
def test_monotone_in_pass_rate(p1, p2, time_ms, scoring, agg):
    lo, hi = sorted((p1, p2))
    logic = RewardLogic((
        RewardRule(0.7, "test_pass_rate", aggregation=agg, scoring=scoring, threshold=1.0 if scoring == "step" else None),
        RewardRule(0.3, "execution_time_ms", aggregation=agg, threshold=5000, gate=Gate("test_pass_rate", min=1.0)),
    ))
    low = agentenv.compute_reward(logic, [{"test_pass_rate": lo, "execution_time_ms": time_ms}], METRICS)
    high = agentenv.compute_reward(logic, [{"test_pass_rate": hi, "execution_time_ms": time_ms}], METRICS)
    assert high.total >= low.total - 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(rule_st, min_size=1, max_size=4), st.lists(run_st, min_size=1, max_size=8))
def test_dense_rewards_telescope_to_the_final_score(rules, runs):
    logic = RewardLogic(normalized(rules) or rules)
    previous, total = 0.0, 0.0
    for i in range(1, len(runs) + 1):  # successive evaluations' scores, as reward_mode="dense" takes them
        score = agentenv.compute_reward(logic, runs[:i], METRICS).total
        total += score - previous
        previous = score
    assert total == pytest.approx(agentenv.compute_reward(logic, runs, METRICS).total, abs=1e-9)


def test_gate_keeps_an_empty_program_from_earning_the_speed_share():
    logic = RewardLogic((RewardRule(0.7, "test_pass_rate"),
                         RewardRule(0.3, "execution_time_ms", threshold=5000, gate=Gate("test_pass_rate", min=1.0))))
    empty = agentenv.compute_reward(logic, [{"test_pass_rate": 0.0, "execution_time_ms": 1.0}], METRICS)
    assert empty.total == 0.0 and empty.rules[1].gated_out == 1
    solved = agentenv.compute_reward(logic, [{"test_pass_rate": 1.0, "execution_time_ms": 2500.0}], METRICS)
    assert solved.total == pytest.approx(0.7 + 0.3 * 0.5)


def test_lower_is_better_scoring_linear_and_step():
    lin = RewardLogic((RewardRule(1.0, "peak_memory_mb", threshold=100),))
    step = RewardLogic((RewardRule(1.0, "peak_memory_mb", threshold=100, scoring="step"),))
    assert agentenv.compute_reward(lin, [{"peak_memory_mb": 25}], METRICS).total == pytest.approx(0.75)
    assert agentenv.compute_reward(lin, [{"peak_memory_mb": 250}], METRICS).total == 0.0
    assert agentenv.compute_reward(step, [{"peak_memory_mb": 100}], METRICS).total == 1.0
    assert agentenv.compute_reward(step, [{"peak_memory_mb": 101}], METRICS).total == 0.0


def test_aggregations_over_runs():
    runs = [{"test_pass_rate": v} for v in (0.5, 1.0, 0.0)]
    expect = {"max": 1.0, "min": 0.0, "mean": 0.5, "first": 0.5, "last": 0.0}
    for agg, value in expect.items():
        logic = RewardLogic((RewardRule(1.0, "test_pass_rate", aggregation=agg),))
        assert agentenv.compute_reward(logic, runs, METRICS).total == pytest.approx(value), agg


def test_missing_metric_scores_zero_and_no_runs_is_no_success():
    logic = RewardLogic((RewardRule(1.0, "test_pass_rate"),))
    result = agentenv.compute_reward(logic, [], METRICS)
    assert result.total == 0.0 and not result.success
    assert agentenv.compute_reward(logic, [{"exit_code": 0}], METRICS).rules[0].value is None


def test_a_gated_reward_model_earns_nothing_for_a_failing_solution():
    logic = RewardLogic((RewardRule(weight=0.9, metric="test_pass_rate", threshold=1.0, scoring="step"),
                         RewardRule(weight=0.1, reward_model="readability",
                                    gate=Gate("test_pass_rate", min=1.0))))
    infos = agentenv.registry().metrics
    passing = agentenv.compute_reward(logic, [{"test_pass_rate": 1.0}], infos, {1: 0.8})
    failing = agentenv.compute_reward(logic, [{"test_pass_rate": 0.5}], infos, {1: 1.0})
    mixed = agentenv.compute_reward(logic, [{"test_pass_rate": 1.0}, {"test_pass_rate": 0.0}], infos, {1: 1.0})
    nothing = agentenv.compute_reward(logic, [{"exit_code": 0}], infos, {1: 1.0})  # no run reports the gate
    assert passing.total == pytest.approx(0.98)
    assert failing.total == 0.0 and failing.rules[1].gated_out == 1, "a failing solution earns no readability"
    assert mixed.rules[1].score == 0.0 and nothing.rules[1].score == 0.0
