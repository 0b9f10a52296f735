"""Calibration (agentenv calibrate, the suite's calibration.json) and the curriculum / dynamic-sampling API."""

from __future__ import annotations

import json
import math
import os
import shutil

import pytest
from hypothesis import given, strategies as st

import agentenv
from agentenv import Curriculum, TaskDifficulty, difficulty_band, fill_batch, filter_groups, wilson_interval
from agentenv._cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_wilson_interval_matches_published_values():
    # Newcombe (1998), table I: 81/263 -> 0.2553..0.3662; 15/148 -> 0.0624..0.1605
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    low, high = wilson_interval(15, 148)
    assert (round(low, 4), round(high, 4)) == (0.0624, 0.1605)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_interval_holds_the_rate_and_stays_in_0_1(case):
    successes, n = case
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_bands():
    assert [difficulty_band(s, 10) for s in (0, 1, 3, 6, 7, 9, 10)] == \
        ["unsolved", "hard", "medium", "medium", "easy", "easy", "solved"]
    with pytest.raises(ValueError):
        difficulty_band(0, 0)


def test_filter_groups_drops_groups_without_signal_and_reports_the_share():
    result = filter_groups({"a": [1, 1, 1, 1], "b": [0, 1, 0, 0], "c": [0.0, 0.0], "d": [0.5, 0.5 + 1e-12], "e": [1]})
    assert result.kept == ("b",) and result.dropped == ("a", "c", "d", "e") and result.dropped_share == 0.8
    assert filter_groups([[0, 1], [1, 1]]).kept == (0,)
    with pytest.raises(ValueError, match="NaN"):
        filter_groups([[math.nan, 1]])


def test_fill_batch_draws_until_enough_groups_carry_signal():
    draws = iter([("p1", [1, 1]), ("p2", [0, 1]), ("p3", [0, 0]), ("p4", [1, 0]), ("p5", [0, 1])])
    batch = fill_batch(lambda: next(draws), size=2, max_draws=5)
    assert [k for k, _ in batch.groups] == ["p2", "p4"] and batch.drawn == 4 and batch.dropped_share == 0.5
    stale = fill_batch(lambda: ("same", [1.0, 1.0]), size=2, max_draws=3)
    assert not stale.full and stale.dropped_share == 1.0
    with pytest.raises(ValueError):
        fill_batch(lambda: ("x", [0, 1]), size=3, max_draws=2)


def test_curriculum_samples_by_band():
    found = {f"t{i}": TaskDifficulty(f"t{i}", 10, s) for i, s in enumerate([0, 2, 5, 5, 8, 10])}
    curriculum = Curriculum(found, seed=1)
    assert curriculum.by_band() == {"unsolved": ["t0"], "hard": ["t1"], "medium": ["t2", "t3"], "easy": ["t4"],
                                    "solved": ["t5"]}
    assert curriculum.tasks() == ["t1", "t2", "t3", "t4"]
    drawn = curriculum.sample(200, {"medium": 3, "hard": 1})
    assert set(drawn) == {"t1", "t2", "t3"} and drawn.count("t1") < drawn.count("t2") + drawn.count("t3")
    with pytest.raises(ValueError, match="unknown band"):
        curriculum.sample(1, {"impossible": 1})
    with pytest.raises(ValueError, match="no task in the bands"):
        Curriculum({"t0": found["t0"]}).sample(1)


def test_calibrate_writes_the_sidecar_per_agent(tmp_path, capsys):
    suite = tmp_path / "examples"
    shutil.copytree(os.path.join(ROOT, "tasks", "examples"), suite)
    out = str(tmp_path / "run")
    args = ["calibrate", str(suite), "--samples", "2", "--workers", "2", "--tasks", "examples.fizzbuzz,examples.word_count",
            "-q", "--out"]
    assert main(args[:2] + ["--agent", "reference"] + args[2:] + [out + "-ref"]) == 0
    assert main(args[:2] + ["--agent", "noop"] + args[2:] + [out + "-noop"]) == 0
    text = capsys.readouterr().out
    assert "examples.fizzbuzz" in text and "[0.34, 1.00]  solved" in text
    doc = json.loads((suite / "calibration.json").read_text())
    assert set(doc["agents"]) == {"reference", "noop"} and doc["suite"]["name"] == "examples"
    entry = doc["agents"]["noop"]["tasks"]["examples.fizzbuzz"]
    assert entry == {"samples": 2, "successes": 0, "pass_rate": 0.0, "ci95": [0.0, 0.65762], "band": "unsolved",
                     "mean_reward": 0.0}
    assert agentenv.read_calibration(str(suite), "reference")["examples.word_count"].band == "solved"
    with pytest.raises(agentenv.ToolError, match="name one with agent="):
        agentenv.read_calibration(str(suite))
    # calibrating from an existing run gives the same numbers without playing again
    assert main(["calibrate", str(suite), "--agent", "ignored", "--from", os.path.join(out + "-noop", "results.json")]) == 0
    assert json.loads((suite / "calibration.json").read_text())["agents"]["noop"]["tasks"]["examples.fizzbuzz"] == entry
