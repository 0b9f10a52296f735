"""The result log alone (no cluster): keyed by (task, sample), a cut last line is dropped, a
damaged line is named, a second result for a key is refused, cancelled outcomes are redone."""

from __future__ import annotations

import pytest

import agentenv
from agentenv import EpisodeJob, Scheduler, SchedulerConfig, ThreadExecutor
from agentenv_ray import ResultLog, ResultLogError


def work(payload, ctx):
    ctx.enter("agent")
    return {"value": payload}


def test_a_rerun_skips_what_the_log_holds_and_survives_a_cut_line(tmp_path):
    path = tmp_path / "results.jsonl"
    jobs = [EpisodeJob(("t", i), "t", payload=i) for i in range(5)]
    with ThreadExecutor(work, workers=2) as executor:
        with ResultLog(str(path)) as log:
            first = log.run(Scheduler(executor, SchedulerConfig()), jobs[:3])
        assert [o.key for o in first.outcomes] == [("t", 0), ("t", 1), ("t", 2)]
        with open(path, "a") as f:
            f.write('{"key": ["t", 3], "status": "o')  # a kill in the middle of a write
        with ResultLog(str(path)) as log:
            assert [j.key for j in log.pending(jobs)] == [("t", 3), ("t", 4)]
            second = log.run(Scheduler(executor, SchedulerConfig()), jobs)
            assert [o.key for o in second.outcomes] == [("t", 3), ("t", 4)]
            with pytest.raises(ResultLogError, match="a job ran twice"):
                log.append(second.outcomes[0])
    assert len(path.read_text().splitlines()) == 5


def test_a_damaged_log_is_named_and_cancelled_outcomes_are_not_logged(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": ["t", 0]}\nnot json\n{"key": ["t", 1]}\n')
    with pytest.raises(ResultLogError, match=r"results.jsonl:2: not a JSON line"):
        ResultLog(str(path))
    fresh = tmp_path / "fresh.jsonl"
    with ResultLog(str(fresh)) as log:
        log.append(agentenv.EpisodeOutcome(("t", 0), "t", "cancelled"))
        assert not log.done(("t", 0))
