"""The scheduler's invariants, against random workloads on a simulated clock (no real time passes):
no job lost or run to two outcomes, no short episode waiting behind a long one while a short-lane
worker is free, cancelled and cut attempts leave nothing behind, the admission cap holds. Plus the
thread executor with real threads."""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv
from agentenv import Deadlines, EpisodeJob, Lane, Scheduler, SchedulerConfig

pytestmark = pytest.mark.unit


# --------------------------------------------------------------------------- a simulated world

class FakeClock(agentenv.Clock):
    """Time moves only when the scheduler waits: to the next simulated event, or to its timeout."""

    def __init__(self):
        self.t = 0.0
        self._timers: list = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.t

    def call_at(self, t: float, fn) -> None:
        heapq.heappush(self._timers, (t, next(self._seq), fn))

    def wait(self, condition, timeout) -> None:
        limit = math.inf if timeout is None else self.t + timeout
        if self._timers and self._timers[0][0] <= limit:
            t, _, fn = heapq.heappop(self._timers)
            self.t = max(self.t, t)
            fn()
        elif timeout is None:
            raise AssertionError("the scheduler waits forever with nothing pending (a deadlock)")
        else:
            self.t = limit


@dataclass(frozen=True)
class Behaviour:
    """How a simulated episode behaves: its phase durations and how it ends."""

    start_s: float = 0.01
    agent_s: float = 0.3
    scoring_s: float = 0.05
    ending: str = "ok"  # ok | masked | raise_infra | raise_error | masked_once
    ignores_cancel: bool = False


class SimExecutor(agentenv.Executor):
    """Attempts are timers on the fake clock. ``open`` holds the 'sandboxes' of running attempts;
    a cancelled attempt releases them (unless it ignores cancellation: then it is abandoned)."""

    def __init__(self, clock: FakeClock, slots: int, behaviours: dict):
        self.clock, self._slots, self.behaviours = clock, slots, behaviours
        self.open: dict[int, object] = {}
        self.starting: set[int] = set()
        self.max_starting = 0
        self.generation: dict[int, int] = {}
        self.runs = []  # (attempt id, job key)
        self.start_times: list[float] = []  # when each attempt reached the executor
        self.abandoned: set[int] = set()
        self.cancel_calls = 0
        self.events = {}

    @property
    def slots(self) -> int:
        return self._slots

    def start(self, attempt, events):
        b = self.behaviours[attempt.job.key]
        if b.ending == "masked_once" and attempt.number == 0:
            b = Behaviour(b.start_s, b.agent_s, b.scoring_s, "masked")
        elif b.ending == "masked_once":
            b = Behaviour(b.start_s, b.agent_s, b.scoring_s, "ok")
        aid = attempt.id
        assert aid not in self.open
        self.open[aid] = attempt.job.key
        self.starting.add(aid)
        self.max_starting = max(self.max_starting, len(self.starting))
        self.runs.append((aid, attempt.job.key))
        self.start_times.append(self.clock.t)
        self.events[aid] = events
        self.generation[aid] = 0
        t = self.clock.t

        def live(fn):
            gen = self.generation[aid]
            return lambda: fn() if self.generation.get(aid) == gen else None

        def up():
            self.starting.discard(aid)
            events.phase(attempt, "agent")

        def scoring():
            events.phase(attempt, "scoring")

        def finish():
            self.open.pop(aid, None)
            self.generation.pop(aid, None)
            if b.ending == "masked":
                events.done(attempt, {"reward_masked": True, "infra_error": "simulated"})
            elif b.ending == "raise_infra":
                events.done(attempt, None, agentenv.SandboxError("simulated sandbox death"))
            elif b.ending == "raise_error":
                events.done(attempt, None, ValueError("the agent crashed"))
            else:
                events.done(attempt, {"reward": 1.0, "key": attempt.job.key})

        self.clock.call_at(t + b.start_s, live(up))
        self.clock.call_at(t + b.start_s + b.agent_s, live(scoring))
        self.clock.call_at(t + b.start_s + b.agent_s + b.scoring_s, live(finish))

    def cancel(self, attempt):
        self.cancel_calls += 1
        aid = attempt.id
        if aid not in self.open or self.behaviours[attempt.job.key].ignores_cancel:
            return
        self.generation[aid] = self.generation.get(aid, 0) + 1  # its pending timers are void
        events = self.events[aid]

        def stopped():
            self.open.pop(aid, None)
            self.starting.discard(aid)
            self.generation.pop(aid, None)
            events.done(attempt, None, None)

        self.clock.call_at(self.clock.t + 0.01, stopped)

    def abandon(self, attempt):
        self.abandoned.add(attempt.id)
        self.open.pop(attempt.id, None)  # the simulated stuck work is written off
        self.starting.discard(attempt.id)


class Recorder:
    """Checks the invariants after every decision round of the scheduler."""

    def __init__(self, config: SchedulerConfig, executor: SimExecutor):
        self.config, self.executor = config, executor
        self.rounds = 0
        self.seen: set[int] = set()

    def __call__(self, sched: Scheduler) -> None:
        self.rounds += 1
        for attempt, home, stolen in sched.running():
            if attempt.id in self.seen:
                continue
            self.seen.add(attempt.id)
            if stolen:  # a slot lends itself only when its own lane has nothing waiting
                assert sched.queued[home] == 0, (attempt, home, sched.queued)
                assert attempt.lane != home
        assert sched.starting() <= self.config.max_starting
        assert len(self.executor.starting) <= self.config.max_starting
        if sched.starting() >= self.config.max_starting or sched.winding_down:
            return  # admission closed (or the run is being wound down): waiting is allowed
        idle = sched.idle_slots()
        for lane, depth in sched.queued.items():
            if depth:
                # no short episode waits behind a long one while a slot of its lane is free
                assert not [s for s in idle if s.home == lane], (lane, depth, idle)
        if any(sched.queued.values()) and not any(l.reserve for l in self.config.lanes):
            assert not idle, f"slots {idle} idle while {sched.queued} wait"


def run_sim(behaviours: dict, jobs: list[EpisodeJob], slots: int, config: SchedulerConfig,
            need_groups: int | None = None):
    clock = FakeClock()
    executor = SimExecutor(clock, slots, behaviours)
    recorder = Recorder(config, executor)
    sched = Scheduler(executor, config, clock=clock, observer=recorder)
    reported = []
    report = sched.run(jobs, on_outcome=reported.append, need_groups=need_groups)
    return report, reported, executor, recorder


# --------------------------------------------------------------------------- random workloads

LANE_SETS = {
    "two": (Lane("short", 5.0, min_workers=1), Lane("long", math.inf, min_workers=1)),
    "fifo": (Lane("fifo", math.inf),),
    "three": (Lane("short", 1.0), Lane("mid", 10.0, max_workers=2), Lane("long", math.inf, max_workers=1)),
    "reserve": (Lane("short", 5.0, min_workers=2, reserve=1), Lane("long", math.inf)),
}


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 30))
    tasks = [f"t{i}" for i in range(draw(st.integers(1, 5)))]
    behaviours, jobs = {}, []
    for i in range(n):
        task = draw(st.sampled_from(tasks))
        expected = draw(st.sampled_from([None, 0.3, 20.0]))
        key = (task, i)
        ending = draw(st.sampled_from(["ok"] * 6 + ["masked", "raise_infra", "raise_error", "masked_once"]))
        behaviours[key] = Behaviour(
            start_s=draw(st.sampled_from([0.01, 0.5, 3.0, 9.0])),
            agent_s=draw(st.sampled_from([0.1, 0.3, 2.0, 20.0, 45.0])),
            scoring_s=draw(st.sampled_from([0.01, 1.0, 12.0])),
            ending=ending, ignores_cancel=draw(st.booleans()) and draw(st.booleans()))
        jobs.append(EpisodeJob(key, task, payload=i, expected_duration_s=expected, group=i % 4))
    config = SchedulerConfig(
        lanes=LANE_SETS[draw(st.sampled_from(sorted(LANE_SETS)))],
        deadlines=Deadlines(start_s=5.0, agent_s=30.0, scoring_s=10.0),
        retries=draw(st.integers(0, 2)), max_starting=draw(st.integers(1, 4)),
        burst_jitter_s=draw(st.sampled_from([0.0, 0.05])), cancel_grace_s=5.0,
        purpose="train", seed=draw(st.integers(0, 3)))
    slots = draw(st.integers(1, 6))
    return behaviours, jobs, slots, config


def expected_status(b: Behaviour, d: Deadlines, retries: int) -> set[str]:
    if b.start_s >= d.start_s:
        return {"infrastructure"}
    if b.agent_s >= d.agent_s or b.scoring_s >= d.scoring_s:
        return {"timeout"}
    return {"ok": {"ok"}, "masked_once": {"ok"} if retries else {"infrastructure"},
            "masked": {"infrastructure"}, "raise_infra": {"infrastructure"}, "raise_error": {"error"}}[b.ending]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_every_job_gets_exactly_one_outcome_and_nothing_leaks(workload):
    behaviours, jobs, slots, config = workload
    report, reported, executor, recorder = run_sim(behaviours, jobs, slots, config)
    keys = [j.key for j in jobs]
    assert [o.key for o in report.outcomes] == keys  # none lost, none duplicated, in submission order
    assert sorted(o.key for o in reported) == sorted(keys)  # each reported once
    for job, outcome in zip(jobs, report.outcomes):
        b = behaviours[job.key]
        assert outcome.status in expected_status(b, config.deadlines, config.retries), (b, outcome)
        if outcome.status == "timeout":
            assert outcome.phase == ("agent" if b.agent_s >= 30.0 else "scoring")
        if outcome.status == "ok":
            assert outcome.value == {"reward": 1.0, "key": job.key}
        if outcome.status == "infrastructure" and b.start_s < 5.0:
            assert outcome.attempts == config.retries + 1  # bounded retries, and all of them used
        if outcome.status in ("error", "timeout"):
            assert outcome.attempts == 1  # the agent's failures are never retried
        lane = next(l for l in config.lanes if outcome.predicted_s <= l.max_predicted_s)
        assert outcome.lane == lane.name  # routed by the prediction that is recorded with it
    # nothing left behind: every sandbox of every attempt is closed (stuck ones written off, counted)
    assert executor.open == {}
    assert report.counters.get("abandoned", 0) == len(executor.abandoned)
    for aid in executor.abandoned:
        key = dict(executor.runs)[aid]
        assert behaviours[key].ignores_cancel
    assert executor.max_starting <= config.max_starting
    assert report.counters["max_starting_seen"] <= config.max_starting
    assert 0.0 <= report.utilisation <= 1.0 + 1e-9


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.integers(1, 4))
def test_over_provisioning_keeps_the_first_groups_and_cancels_the_rest_cleanly(workload, need):
    behaviours, jobs, slots, config = workload
    groups = list(dict.fromkeys(j.group for j in jobs))
    need = min(need, len(groups))
    report, reported, executor, _ = run_sim(behaviours, jobs, slots, config, need_groups=need)
    over = report.overprovision
    assert len(over.selected) == need and set(over.selected) | set(over.dropped) == set(groups)
    assert not set(over.selected) & set(over.dropped)
    by_group = {}
    for o in report.outcomes:
        by_group.setdefault(o.group, []).append(o)
    for group in over.selected:
        assert all(o.selected is True and o.status != "cancelled" for o in by_group[group])
    last_selected = max(o.finished_at for g in over.selected for o in by_group[g])
    for group in over.dropped:
        assert all(o.selected is False for o in by_group[group])
        # it was unfinished when the first groups were in (or finished in that very instant, after them)
        assert (any(o.status == "cancelled" for o in by_group[group])
                or max(o.finished_at for o in by_group[group]) >= last_selected)
    assert sorted(o.key for o in reported) == sorted(j.key for j in jobs)
    assert executor.open == {}  # cancelled attempts left nothing behind


def test_short_episodes_do_not_wait_behind_the_long_tail():
    """FIFO puts the 0.3 s episodes behind 20 s ones; lanes keep them moving, and the long ones
    still start early enough that the makespan stays near its lower bound."""
    jobs, behaviours = [], {}
    for i in range(1000):
        long = i % 10 == 0
        key = ("long" if long else "short", i)
        jobs.append(EpisodeJob(key, key[0], expected_duration_s=20.0 if long else 0.3))
        behaviours[key] = Behaviour(start_s=0.0001, agent_s=20.0 if long else 0.3, scoring_s=0.0001)
    d = Deadlines(start_s=5, agent_s=60, scoring_s=5)
    results = {}
    for name, config in (("fifo", SchedulerConfig.fifo(deadlines=d, burst_jitter_s=0)),
                         ("lanes", SchedulerConfig(deadlines=d, burst_jitter_s=0))):
        report, _, _, _ = run_sim(behaviours, jobs, 8, config)
        shorts = sorted(o.latency_s for o in report.outcomes if o.task_id == "short")
        results[name] = (shorts[int(0.99 * len(shorts)) - 1], report.makespan_s, report.utilisation)
    short_alone, _, _, _ = run_sim(behaviours, [j for j in jobs if j.task_id == "short"], 8,
                                   SchedulerConfig(deadlines=d, burst_jitter_s=0))
    alone = sorted(o.latency_s for o in short_alone.outcomes)
    alone_p99 = alone[int(0.99 * len(alone)) - 1]
    lower_bound = (900 * 0.3002 + 100 * 20.0002) / 8
    assert results["lanes"][0] <= 1.5 * alone_p99 < results["fifo"][0]
    assert results["lanes"][1] <= 1.1 * lower_bound
    assert results["lanes"][2] >= 0.9


def test_a_slot_that_frees_up_alone_starts_its_next_attempt_at_once():
    # the burst jitter once delayed every start while the queue was long: up to 50 ms between
    # episodes, a third of an eval of short tasks
    behaviours, jobs = {}, []
    for i in range(40):
        jobs.append(EpisodeJob(("t", i), "t", expected_duration_s=0.3))
        behaviours[("t", i)] = Behaviour(start_s=0.01, agent_s=0.3, scoring_s=0.05)
    config = SchedulerConfig(max_starting=4, burst_jitter_s=0.05)
    report, reported, _, _ = run_sim(behaviours, jobs, 1, config)
    assert len(reported) == 40 and report.makespan_s == pytest.approx(40 * 0.36)
    # a burst is still spread: eight slots idle at once, forty waiting
    report, _, executor, _ = run_sim(behaviours, jobs, 8, config)
    first = sorted(t for t in executor.start_times[:4])
    assert len(set(first)) == 4 and 0 < first[-1] <= 0.05


def test_predictions_learn_from_observed_durations_and_reroute():
    """A task whose document says 0.3 s but takes 25 s moves to the long lane after a few runs."""
    predictor = agentenv.DurationPredictor(window=5)
    assert predictor.predict("slow", 0.3) == 0.3
    for _ in range(3):
        predictor.observe("slow", 25.0)
    assert predictor.predict("slow", 0.3) == pytest.approx(25.0)
    sched = Scheduler(SimExecutor(FakeClock(), 1, {}), SchedulerConfig(), predictor=predictor)
    assert sched.route(EpisodeJob(("slow", 0), "slow", expected_duration_s=0.3)) == ("long", pytest.approx(25.0))
    assert sched.route(EpisodeJob(("fast", 0), "fast", expected_duration_s=0.3)) == ("short", 0.3)
    # one outlier among fast runs does not move the p90 of a large window much, and state round-trips
    for _ in range(19):
        predictor.observe("fast", 0.3)
    predictor.observe("fast", 30.0)
    again = agentenv.DurationPredictor.from_state(predictor.state(), window=5)
    assert again.predict("fast") == predictor.predict("fast")


def test_an_evaluation_never_drops_episodes_and_bad_configs_are_named():
    sim = SimExecutor(FakeClock(), 1, {})
    jobs = [EpisodeJob(("a", 0), "a", group=0), EpisodeJob(("a", 1), "a", group=1)]
    with pytest.raises(agentenv.SchedulerError, match="never drops episodes"):
        Scheduler(sim, SchedulerConfig()).run(jobs, need_groups=1)
    with pytest.raises(agentenv.SchedulerError, match="appears more than once"):
        Scheduler(sim, SchedulerConfig()).run([jobs[0], jobs[0]])
    with pytest.raises(agentenv.SchedulerError, match=r"max_predicted_s must increase.*\n.*last lane"):
        Scheduler(sim, SchedulerConfig(lanes=(Lane("a", 5.0), Lane("b", 1.0))))
    with pytest.raises(agentenv.SchedulerError, match="deadlines.agent_s must be a positive"):
        Scheduler(sim, SchedulerConfig(deadlines=Deadlines(agent_s=0)))
    assert issubclass(agentenv.SchedulerError, agentenv.AgentEnvError)


# --------------------------------------------------------------------------- real threads

def test_thread_executor_cuts_a_straggler_and_keeps_every_slot_busy():
    """Real threads: a straggler is cut at its agent deadline (its cancel hook runs, its slot is
    reused after it stopped), a stuck one is abandoned, the rest finish; per-slot state persists."""
    stopped, seen_local = [], set()

    def work(payload, ctx):
        ctx.local.setdefault("id", object())
        seen_local.add(id(ctx.local["id"]))
        ctx.enter("agent")
        if payload == "straggler":
            gate = threading.Event()
            ctx.on_cancel(gate.set)
            gate.wait(30)
            stopped.append(ctx.cancelled)
            return "too late"
        if payload == "stuck":
            time.sleep(1.5)  # ignores its cancellation
            return "stuck"
        time.sleep(0.01)
        ctx.enter("scoring")
        return payload

    jobs = [EpisodeJob(("s", i), "s", payload=i, expected_duration_s=0.01) for i in range(20)]
    jobs += [EpisodeJob(("x", 0), "x", payload="straggler"), EpisodeJob(("y", 0), "y", payload="stuck")]
    config = SchedulerConfig(deadlines=Deadlines(start_s=30, agent_s=0.4, scoring_s=30), cancel_grace_s=0.5)
    with agentenv.ThreadExecutor(work, workers=3) as executor:
        report = Scheduler(executor, config).run(jobs)
        assert executor.abandoned == 1
    status = {o.key: o.status for o in report.outcomes}
    assert [status[("s", i)] for i in range(20)] == ["ok"] * 20
    assert [o.value for o in report.outcomes[:20]] == list(range(20))
    assert status[("x", 0)] == "timeout" and status[("y", 0)] == "timeout"
    assert stopped == [True]  # the straggler heard its cancellation and returned
    assert report.counters["abandoned"] == 1 and len(seen_local) <= 4


def test_thread_executor_retries_infrastructure_failures_only():
    calls = []

    def work(payload, ctx):
        calls.append(payload)
        ctx.enter("agent")
        if payload == "flaky" and calls.count("flaky") == 1:
            raise agentenv.SandboxError("the sandbox died")
        if payload == "bug":
            raise KeyError("the agent's bug")
        return payload

    jobs = [EpisodeJob((p, 0), p, payload=p) for p in ("flaky", "bug", "fine")]
    with agentenv.ThreadExecutor(work, workers=2) as executor:
        report = Scheduler(executor, SchedulerConfig(retries=1)).run(jobs)
    got = {o.key[0]: (o.status, o.attempts) for o in report.outcomes}
    assert got == {"flaky": ("ok", 2), "bug": ("error", 1), "fine": ("ok", 1)}
    assert "KeyError" in report.outcomes[1].error


def test_a_task_whose_document_guessed_short_moves_its_queued_jobs_to_the_long_lane():
    """The document says 0.3 s, the episodes take 25 s: after the first one finishes, the rest of
    that task's queued jobs leave the short lane, and the outcomes record the corrected prediction."""
    jobs = [EpisodeJob(("liar", i), "liar", expected_duration_s=0.3) for i in range(6)]
    jobs += [EpisodeJob(("short", i), "short", expected_duration_s=0.3) for i in range(30)]
    behaviours = {j.key: Behaviour(agent_s=25.0 if j.task_id == "liar" else 0.3) for j in jobs}
    config = SchedulerConfig(deadlines=Deadlines(agent_s=60), burst_jitter_s=0)
    report, _, _, _ = run_sim(behaviours, jobs, 2, config)
    liar = [o for o in report.outcomes if o.task_id == "liar"]
    assert liar[0].lane == "short" and liar[0].predicted_s == 0.3
    assert report.counters["rerouted"] >= 1
    assert [o.lane for o in liar[-3:]] == ["long"] * 3 and liar[-1].predicted_s == pytest.approx(25.0, rel=0.01)
