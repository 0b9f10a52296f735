"""A long-tail-aware episode scheduler: lanes, deadlines, retries, over-provisioning, admission.

Episode durations span orders of magnitude (a unit test in 0.3 s, an integration test in minutes).
Run first-come-first-served, short episodes queue behind the long tail and a training step waits
for its slowest rollout. This module decides *what runs when*; an :class:`Executor` decides *where*
(threads here, Ray actors in ``agentenv-ray``), and the unit of work is a callable that runs one
episode, so the scheduler knows nothing of sandboxes. Standard library only.

- **Lanes.** Each job is routed by its predicted duration (the task's ``expected_duration_s``,
  corrected online per task by :class:`DurationPredictor`: an EWMA of the p90 of recent durations)
  into the first lane whose ``max_predicted_s`` covers it. The prediction used is recorded with the
  outcome. Every worker slot has a home lane; each lane owns its ``min_workers``, and the other
  slots go to the shortest lanes first, each up to its demand (queued plus running) and its
  ``max_workers``. An idle slot serves its home lane first; when that is empty it *steals* from
  another lane and returns home when the episode ends, so no slot idles while work waits (except
  a lane's ``reserve`` of idle slots, which are never lent).
- **Deadlines per phase.** An attempt is in ``start`` (sandbox creation) until the work calls
  ``ctx.enter("agent")``, then ``agent`` until ``ctx.enter("scoring")``. Each phase has its own
  budget (:class:`Deadlines`); scoring gets ``scoring_s`` from its start, so a sandbox outlives the
  rollout deadline by the scoring time. An attempt past its agent or scoring deadline is cut: its
  outcome is ``timeout`` (the agent's failure, scored 0), the executor cancels it (the work's
  cancel hooks close its sandboxes) and its slot is reused only once the work has returned (or is
  abandoned after ``cancel_grace_s``). A start past its deadline is an infrastructure failure.
- **Retries** for infrastructure failures only: a work that raises :class:`InfrastructureError` or
  returns a value whose ``reward_masked`` is true is run again (at most ``retries`` times).
- **Over-provisioning** (``purpose="train"`` only): ``run(jobs, need_groups=N)`` with N+k groups
  keeps the first N groups to finish and cancels the rest cleanly; :class:`OverProvision` records
  the choice. ``purpose="eval"`` refuses it: an evaluation never drops episodes.
- **Admission.** At most ``max_starting`` attempts are in the start phase at once; when one
  dispatch starts several while more than that wait (a burst), each of those starts is delayed by a
  random jitter up to ``burst_jitter_s``.

Every decision happens in one thread (the caller of :meth:`Scheduler.run`); executors report from
any thread through :class:`AttemptEvents`. Time comes from a :class:`Clock`, so tests drive the
whole machine with a fake one.
"""

from __future__ import annotations

import abc
import collections
import logging
import math
import random
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from ._errors import InfrastructureError, SchedulerError

log = logging.getLogger("agentenv.scheduler")

PHASES = ("start", "agent", "scoring")
#: outcome statuses; only ``ok`` and ``error`` are the work's own result, ``timeout`` is the agent's
STATUSES = ("ok", "timeout", "error", "infrastructure", "cancelled")
#: timers this close to now are due (a clock that returns a hair early must not make the loop spin)
_EPS = 1e-6


# --------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class Deadlines:
    """Budgets in seconds for each phase of one attempt.

    ``scoring_s`` is the scoring buffer: the evaluation of a rollout may run that long after the
    rollout's own deadline, so a sandbox never dies between the agent's last step and its score."""

    start_s: float = 120.0
    agent_s: float = 900.0
    scoring_s: float = 300.0

    def budget(self, phase: str) -> float:
        return {"start": self.start_s, "agent": self.agent_s, "scoring": self.scoring_s}[phase]

    def problems(self) -> list[str]:
        return [f"deadlines.{name} must be a positive number of seconds, not {value!r}"
                for name, value in (("start_s", self.start_s), ("agent_s", self.agent_s),
                                    ("scoring_s", self.scoring_s))
                if not isinstance(value, (int, float)) or not value > 0 or math.isnan(value)]


@dataclass(frozen=True)
class Lane:
    """Episodes predicted to last at most ``max_predicted_s`` (and more than the previous lane's
    bound) run in this lane. ``min_workers``/``max_workers`` bound the slots it owns; ``reserve``
    idle slots of its own are never lent to another lane (latency insurance for short lanes)."""

    name: str
    max_predicted_s: float = math.inf
    min_workers: int = 0
    max_workers: int | None = None
    reserve: int = 0


#: two lanes: episodes predicted under 10 s, and the rest
DEFAULT_LANES = (Lane("short", 10.0, min_workers=1), Lane("long", math.inf, min_workers=1))


@dataclass(frozen=True)
class SchedulerConfig:
    lanes: tuple[Lane, ...] = DEFAULT_LANES
    deadlines: Deadlines = Deadlines()
    retries: int = 2  # extra attempts after an infrastructure failure
    max_starting: int = 16  # attempts in the start phase (creating sandboxes) at once
    burst_jitter_s: float = 0.05  # each start of a burst is delayed by up to this (see Admission)
    cancel_grace_s: float = 30.0  # how long a cancelled work may take to return before it is abandoned
    purpose: str = "eval"  # "eval" never drops episodes; "train" may over-provision
    seed: int = 0  # of the jitter's random numbers (decisions are reproducible with a fake clock)

    @classmethod
    def fifo(cls, **kwargs: Any) -> "SchedulerConfig":
        """First-come-first-served: one lane for everything (the baseline the benchmarks compare with)."""
        return cls(lanes=(Lane("fifo", math.inf),), **kwargs)

    def validate(self) -> None:
        problems = list(self.deadlines.problems())
        if not self.lanes:
            problems.append("lanes: at least one lane is needed")
        names = [lane.name for lane in self.lanes]
        if len(set(names)) != len(names):
            problems.append(f"lanes: names must be unique, not {names}")
        bounds = [lane.max_predicted_s for lane in self.lanes]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            problems.append(f"lanes: max_predicted_s must increase strictly from lane to lane, not {bounds}")
        if self.lanes and self.lanes[-1].max_predicted_s != math.inf:
            problems.append("lanes: the last lane must take every duration (max_predicted_s=math.inf)")
        for lane in self.lanes:
            if lane.min_workers < 0 or lane.reserve < 0:
                problems.append(f"lane {lane.name}: min_workers and reserve must be 0 or more")
            if lane.max_workers is not None and lane.max_workers < max(1, lane.min_workers):
                problems.append(f"lane {lane.name}: max_workers ({lane.max_workers}) must be at least 1 "
                                f"and at least min_workers ({lane.min_workers})")
        if self.retries < 0:
            problems.append(f"retries must be 0 or more, not {self.retries}")
        if self.max_starting < 1:
            problems.append(f"max_starting must be at least 1, not {self.max_starting}")
        if self.burst_jitter_s < 0 or self.cancel_grace_s <= 0:
            problems.append("burst_jitter_s must be 0 or more and cancel_grace_s more than 0")
        if self.purpose not in ("eval", "train"):
            problems.append(f"purpose must be 'eval' or 'train', not {self.purpose!r}")
        if problems:
            raise SchedulerError("invalid scheduler configuration:\n  " + "\n  ".join(problems))


# --------------------------------------------------------------------------- time

class Clock:
    """Where the scheduler reads the time and waits. Tests replace it with a simulated clock:
    ``wait`` is the only place the scheduler blocks."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Block (holding *condition*'s lock) until notified or *timeout* seconds passed."""
        condition.wait(timeout)

    def random(self, seed: int) -> random.Random:
        return random.Random(seed)


# --------------------------------------------------------------------------- prediction

class DurationPredictor:
    """Predicted duration per task: the task's ``expected_duration_s`` until it has run, then an
    EWMA of the ``quantile`` (p90) of its last ``window`` observed durations.

    A p90 rather than a mean: routing must not put a task that is usually short but sometimes very
    long into the short lane. The EWMA damps one odd window. Thread-safe; :meth:`state` and
    :meth:`from_state` carry predictions from one run (or training step) to the next."""

    def __init__(self, quantile: float = 0.9, alpha: float = 0.5, window: int = 20, default_s: float = 1.0):
        if not 0 < quantile <= 1 or not 0 < alpha <= 1 or window < 1 or not default_s > 0:
            raise SchedulerError("DurationPredictor needs 0 < quantile <= 1, 0 < alpha <= 1, window >= 1, "
                                 "default_s > 0")
        self.quantile, self.alpha, self.window, self.default_s = quantile, alpha, window, default_s
        self._recent: dict[str, collections.deque] = {}
        self._ewma: dict[str, float] = {}
        self._lock = threading.Lock()

    def predict(self, task_id: str, expected_s: float | None = None) -> float:
        with self._lock:
            if task_id in self._ewma:
                return self._ewma[task_id]
        return float(expected_s) if expected_s and expected_s > 0 else self.default_s

    def observe(self, task_id: str, duration_s: float, expected_s: float | None = None) -> None:
        if not duration_s >= 0 or math.isinf(duration_s):
            return
        with self._lock:
            recent = self._recent.setdefault(task_id, collections.deque(maxlen=self.window))
            recent.append(float(duration_s))
            ordered = sorted(recent)
            q = ordered[min(len(ordered) - 1, max(0, math.ceil(self.quantile * len(ordered)) - 1))]
            previous = self._ewma.get(task_id)
            if previous is None:  # the first observation replaces the document's guess
                self._ewma[task_id] = q
            else:
                self._ewma[task_id] = self.alpha * q + (1 - self.alpha) * previous

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"ewma": dict(self._ewma), "recent": {k: list(v) for k, v in self._recent.items()}}

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **kwargs: Any) -> "DurationPredictor":
        predictor = cls(**kwargs)
        predictor._ewma.update({str(k): float(v) for k, v in state.get("ewma", {}).items()})
        for k, values in state.get("recent", {}).items():
            predictor._recent[str(k)] = collections.deque((float(v) for v in values), maxlen=predictor.window)
        return predictor


# --------------------------------------------------------------------------- jobs and outcomes

@dataclass(frozen=True)
class EpisodeJob:
    """One episode to run. ``key`` is unique in a run (e.g. ``(task_id, sample)``); ``payload`` is
    what the work callable receives (for real episodes, an ``agentenv`` rollout request)."""

    key: Hashable
    task_id: str
    payload: Any = None
    expected_duration_s: float | None = None
    group: Hashable | None = None  # over-provisioning counts finished groups
    deadlines: Deadlines | None = None  # this job's own budgets (default: the config's)


@dataclass(frozen=True)
class Attempt:
    """One try of a job, as handed to an executor."""

    id: int
    job: EpisodeJob
    number: int  # 0 for the first try, 1 for the first retry...
    lane: str
    slot: int
    deadlines: Deadlines


@dataclass(frozen=True)
class EpisodeOutcome:
    """The one terminal result of a job. Times are seconds since the run started."""

    key: Hashable
    task_id: str
    status: str  # one of STATUSES
    value: Any = None  # what the work returned (ok, error-free infrastructure results), else None
    error: str | None = None
    phase: str | None = None  # where a timeout struck
    lane: str = ""
    predicted_s: float = 0.0  # the prediction that routed the job
    attempts: int = 0
    slot: int | None = None
    stolen: bool = False  # run by a slot lent by another lane
    submitted_at: float = 0.0
    started_at: float | None = None
    finished_at: float = 0.0
    duration_s: float = 0.0  # of the last attempt, from its start to its end (or its cut)
    group: Hashable | None = None
    selected: bool | None = None  # over-provisioned runs: whether the group counts
    #: what the work returned in earlier attempts that failed on the infrastructure and were retried
    #: (their trajectories, kept for diagnosis), oldest first
    retried: tuple[Any, ...] = field(default=(), repr=False)

    @property
    def latency_s(self) -> float:
        return self.finished_at - self.submitted_at

    @property
    def masked(self) -> bool:
        """Whether the outcome must be left out of every score (the machinery failed or it was dropped)."""
        return self.status in ("infrastructure", "cancelled")

    def to_json(self) -> dict[str, Any]:
        return {"key": list(self.key) if isinstance(self.key, tuple) else self.key, "task_id": self.task_id,
                "status": self.status, "error": self.error, "phase": self.phase, "lane": self.lane,
                "predicted_s": round(self.predicted_s, 6), "attempts": self.attempts, "slot": self.slot,
                "stolen": self.stolen, "submitted_at": round(self.submitted_at, 6),
                "started_at": None if self.started_at is None else round(self.started_at, 6),
                "finished_at": round(self.finished_at, 6), "duration_s": round(self.duration_s, 6),
                "group": self.group, "selected": self.selected}


@dataclass(frozen=True)
class OverProvision:
    """What an over-provisioned run kept and dropped. The kept groups are the first to finish, so
    they lean towards short episodes: a trainer that cares reads ``dropped`` and the predictions."""

    requested: int
    needed: int
    rule: str = "first groups to finish"
    selected: tuple[Hashable, ...] = ()  # in the order they finished
    dropped: tuple[Hashable, ...] = ()
    selected_mean_predicted_s: float | None = None
    dropped_mean_predicted_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"requested": self.requested, "needed": self.needed, "rule": self.rule,
                "selected": list(self.selected), "dropped": list(self.dropped),
                "selected_mean_predicted_s": self.selected_mean_predicted_s,
                "dropped_mean_predicted_s": self.dropped_mean_predicted_s}


@dataclass
class RunReport:
    """Everything :meth:`Scheduler.run` saw: the outcomes (in submission order), the lanes over
    time (``timeline``: ``(t, {lane: (slots owned, running, queued)})``) and the counters."""

    outcomes: list[EpisodeOutcome]
    makespan_s: float
    slots: int
    busy_s: float  # slot-seconds spent running attempts (cut ones until they returned)
    timeline: list[tuple[float, dict[str, tuple[int, int, int]]]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    overprovision: OverProvision | None = None
    predictor: dict[str, Any] = field(default_factory=dict)

    @property
    def utilisation(self) -> float:
        return self.busy_s / (self.slots * self.makespan_s) if self.makespan_s > 0 else 0.0

    def by_status(self) -> dict[str, int]:
        counts = {s: 0 for s in STATUSES}
        for o in self.outcomes:
            counts[o.status] += 1
        return counts


# --------------------------------------------------------------------------- executors

class AttemptEvents:
    """The scheduler's inbox: an executor reports what its attempts do, from any thread."""

    def __init__(self, post: Callable[[tuple], None]):
        self._post = post

    def phase(self, attempt: Attempt, name: str) -> None:
        """*attempt* entered phase *name* (``agent`` once its sandbox is up, then ``scoring``)."""
        if name not in PHASES:
            raise SchedulerError(f"unknown phase {name!r}; phases are {', '.join(PHASES)}")
        self._post(("phase", attempt.id, name))

    def done(self, attempt: Attempt, value: Any = None, error: BaseException | None = None) -> None:
        """*attempt*'s work returned *value* or raised *error*; after a cancel: it has stopped."""
        self._post(("done", attempt.id, value, error))


class AttemptContext:
    """What a work callable receives with its payload: the attempt, the phase budgets, a place to
    keep per-slot state (``local``: an env reused across episodes) and cancellation.

    A work calls ``enter("agent")`` once its sandbox is up and ``enter("scoring")`` before the
    evaluation, and registers with :meth:`on_cancel` whatever must die when the attempt is cut (its
    sandboxes). Executors build one per attempt, on the machine where the work runs."""

    def __init__(self, attempt: Attempt, on_phase: Callable[[str], None], local: dict | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.attempt, self.deadlines = attempt, attempt.deadlines
        self.local = {} if local is None else local
        self.phase = "start"
        self._on_phase, self._clock = on_phase, clock
        self._phase_started = clock()
        self._hooks: list[Callable[[], None]] = []
        self._cancelled = False
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def enter(self, phase: str) -> None:
        if phase not in PHASES:
            raise SchedulerError(f"unknown phase {phase!r}; phases are {', '.join(PHASES)}")
        if phase != self.phase:
            self.phase, self._phase_started = phase, self._clock()
            self._on_phase(phase)

    def remaining_s(self) -> float:
        """Seconds left in the current phase (a work may bound its own waits with it)."""
        return self.deadlines.budget(self.phase) - (self._clock() - self._phase_started)

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run *hook* when the attempt is cut (at once when it already was)."""
        with self._lock:
            if not self._cancelled:
                self._hooks.append(hook)
                return
        hook()

    @staticmethod
    def close_local(local: dict) -> None:
        """Close every value of a slot's state that can be closed (envs, agents); executors call
        it when a slot ends."""
        for value in list(local.values()):
            closer = getattr(value, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    log.exception("closing a worker's %s", type(value).__name__)
        local.clear()

    def cancel(self) -> None:
        """Fire the cancel hooks once (each hook's failure is logged, the others still run)."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception:
                log.exception("a cancel hook of attempt %s failed", self.attempt.id)


class Executor(abc.ABC):
    """Runs attempts somewhere. ``start`` and ``cancel`` must return at once; the executor reports
    through the events given to ``start``. After ``cancel``, the executor stops the work (its
    cancel hooks fire) and still reports ``done`` once it has stopped; ``abandon`` gives up on a
    work that did not stop in time and frees its slot."""

    @property
    @abc.abstractmethod
    def slots(self) -> int:
        """How many attempts can run at once."""

    @abc.abstractmethod
    def start(self, attempt: Attempt, events: AttemptEvents) -> None:
        ...

    @abc.abstractmethod
    def cancel(self, attempt: Attempt) -> None:
        ...

    def abandon(self, attempt: Attempt) -> None:
        """The work ignored its cancellation; free its slot for new work (default: nothing to do)."""

    def close(self) -> None:
        """Release workers and whatever they hold (idempotent)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Work = Callable[[Any, AttemptContext], Any]


class ThreadExecutor(Executor):
    """Attempts run in this process, one thread per slot. A slot's ``ctx.local`` persists across
    its attempts (values with a ``close()`` are closed with the executor). A work that does not
    return after its cancellation is abandoned: its thread is left to finish on its own (counted in
    ``abandoned``) and a fresh thread takes the slot."""

    def __init__(self, work: Work, workers: int, name: str = "agentenv-worker"):
        if workers < 1:
            raise SchedulerError(f"a ThreadExecutor needs at least 1 worker, not {workers}")
        self.work, self.name = work, name
        self._slots = workers
        self._inbox: list[collections.deque] = [collections.deque() for _ in range(workers)]
        self._wake = [threading.Condition() for _ in range(workers)]
        self._locals: list[dict] = [{} for _ in range(workers)]
        self._contexts: dict[int, AttemptContext] = {}
        self._generation = [0] * workers
        self._threads: list[threading.Thread | None] = [None] * workers
        self._lock = threading.Lock()
        self._closed = False
        self.abandoned = 0

    @property
    def slots(self) -> int:
        return self._slots

    def _thread_for(self, slot: int) -> None:
        thread = self._threads[slot]
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=self._loop, args=(slot, self._generation[slot]),
                                      name=f"{self.name}-{slot}", daemon=True)
            self._threads[slot] = thread
            thread.start()

    def start(self, attempt: Attempt, events: AttemptEvents) -> None:
        with self._lock:
            if self._closed:
                raise SchedulerError("this executor is closed")
            self._thread_for(attempt.slot)
        with self._wake[attempt.slot]:
            self._inbox[attempt.slot].append((attempt, events))
            self._wake[attempt.slot].notify()

    def _loop(self, slot: int, generation: int) -> None:
        while True:
            with self._wake[slot]:
                while not self._inbox[slot] and not self._closed and self._generation[slot] == generation:
                    self._wake[slot].wait()
                if self._closed or self._generation[slot] != generation:
                    return
                attempt, events = self._inbox[slot].popleft()
            ctx = AttemptContext(attempt, lambda phase, a=attempt, e=events: e.phase(a, phase), self._locals[slot])
            with self._lock:
                self._contexts[attempt.id] = ctx
            value, error = None, None
            try:
                value = self.work(attempt.job.payload, ctx)
            except BaseException as exc:  # every failure is reported; the scheduler classifies it
                error = exc
            finally:
                with self._lock:
                    self._contexts.pop(attempt.id, None)
            events.done(attempt, value, error)
            if self._generation[slot] != generation:
                return  # abandoned meanwhile: another thread owns the slot now

    def cancel(self, attempt: Attempt) -> None:
        with self._lock:
            ctx = self._contexts.get(attempt.id)
        if ctx is not None:  # hooks may block (closing a sandbox): never in the scheduler's thread
            threading.Thread(target=ctx.cancel, name=f"{self.name}-cancel-{attempt.id}", daemon=True).start()

    def abandon(self, attempt: Attempt) -> None:
        with self._lock:
            self.abandoned += 1
            slot = attempt.slot
            self._generation[slot] += 1
            self._threads[slot] = None
            self._locals[slot] = {}  # the stuck thread keeps the old state; the new thread starts clean
        log.warning("attempt %s of %r did not stop in time after its cancellation; its thread is abandoned",
                    attempt.id, attempt.job.key)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            contexts = list(self._contexts.values())
        for ctx in contexts:
            ctx.cancel()
        for slot in range(self._slots):
            with self._wake[slot]:
                self._wake[slot].notify_all()
        for thread in self._threads:
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=30)
        for local in self._locals:
            AttemptContext.close_local(local)


def is_infrastructure_failure(value: Any, error: BaseException | None) -> bool:
    """The retry rule: an :class:`InfrastructureError` (or an error marked ``infrastructure``, as
    executors mark a lost worker), or a result whose ``reward_masked`` is true."""
    if error is not None:
        return isinstance(error, InfrastructureError) or bool(getattr(error, "infrastructure", False))
    if isinstance(value, Mapping):
        return bool(value.get("reward_masked"))
    return bool(getattr(value, "reward_masked", False))


# --------------------------------------------------------------------------- the scheduler

@dataclass
class _Slot:
    id: int
    home: str
    attempt: int | None = None  # id of the attempt it runs (or is about to start, or waits to stop)
    busy_since: float = 0.0


@dataclass
class _Live:
    attempt: Attempt
    phase: str
    deadline: float
    started_at: float  # when the executor got it (after any jitter)
    start_at: float  # when it is due to start (jitter); == started_at once started
    launched: bool = False
    stolen: bool = False
    cut_at: float | None = None  # the scheduler gave up on it: waiting for the work to stop


@dataclass
class _JobState:
    job: EpisodeJob
    index: int
    lane: str
    predicted_s: float
    attempts: int = 0
    first_started: float | None = None
    outcome: EpisodeOutcome | None = None
    retried: list[Any] = field(default_factory=list)


class Scheduler:
    """Runs :class:`EpisodeJob`s on an :class:`Executor`. See the module docstring.

    ``Scheduler(executor, config, predictor=None, clock=None).run(jobs, on_outcome=..., need_groups=...)``
    blocks until every job has its one outcome and every attempt it started has stopped, and
    returns a :class:`RunReport`. ``on_outcome`` is called in the scheduler's thread as each
    outcome is decided (an over-provisioned run reports a group when it is complete)."""

    def __init__(self, executor: Executor, config: SchedulerConfig | None = None,
                 predictor: DurationPredictor | None = None, clock: Clock | None = None,
                 observer: Callable[["Scheduler"], None] | None = None):
        self.config = config or SchedulerConfig()
        self.config.validate()
        self.executor = executor
        self.predictor = predictor or DurationPredictor()
        self.clock = clock or Clock()
        self.observer = observer  # called after every decision round (tests check invariants there)
        self._cond = threading.Condition()
        self._inbox: collections.deque = collections.deque()
        self._events = AttemptEvents(self._post)
        self._lanes = {lane.name: lane for lane in self.config.lanes}
        self._running = False

    # ------------------------------------------------------------------ inbox
    def _post(self, event: tuple) -> None:
        with self._cond:
            self._inbox.append(event)
            self._cond.notify()

    # ------------------------------------------------------------------ routing
    def route(self, job: EpisodeJob) -> tuple[str, float]:
        """(lane, predicted seconds) for *job*."""
        predicted = self.predictor.predict(job.task_id, job.expected_duration_s)
        for lane in self.config.lanes:
            if predicted <= lane.max_predicted_s:
                return lane.name, predicted
        return self.config.lanes[-1].name, predicted

    # ------------------------------------------------------------------ state for observers
    @property
    def queued(self) -> dict[str, int]:
        return {name: len(q) for name, q in self._queues.items()}

    @property
    def winding_down(self) -> bool:
        """True once the run stopped taking work (over-provisioning satisfied, or interrupted)."""
        return self._dropping

    def running(self) -> list[tuple[Attempt, str, bool]]:
        """(attempt, home lane of its slot, stolen) for every attempt that holds a slot."""
        return [(live.attempt, self._slots[live.attempt.slot].home, live.stolen) for live in self._live.values()]

    def idle_slots(self) -> list[_Slot]:
        return [s for s in self._slots if s.attempt is None]

    def starting(self) -> int:
        """Attempts that are creating sandboxes (or are about to): what admission caps."""
        # A cut attempt still creating its sandbox counts until it has stopped: the cap is on creations.
        return sum(1 for live in self._live.values() if live.phase == "start")

    # ------------------------------------------------------------------ the run
    def run(self, jobs: Iterable[EpisodeJob], on_outcome: Callable[[EpisodeOutcome], None] | None = None,
            need_groups: int | None = None) -> RunReport:
        if self._running:
            raise SchedulerError("this scheduler is already running; use one scheduler per run at a time")
        jobs = list(jobs)
        keys = [job.key for job in jobs]
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise SchedulerError(f"job key {dup!r} appears more than once; every job needs its own key "
                                 "(e.g. (task_id, sample))")
        groups = list(dict.fromkeys(job.group for job in jobs))
        if need_groups is not None:
            if self.config.purpose == "eval":
                raise SchedulerError("an evaluation never drops episodes: need_groups (over-provisioning) is "
                                     "for purpose='train'; run every job, or set SchedulerConfig(purpose='train')")
            if None in groups:
                raise SchedulerError("over-provisioning counts groups: give every job a group")
            if not 1 <= need_groups <= len(groups):
                raise SchedulerError(f"need_groups={need_groups} but the jobs form {len(groups)} groups")
        for job in jobs:
            if job.deadlines is not None and job.deadlines.problems():
                raise SchedulerError(f"job {job.key!r}: " + "; ".join(job.deadlines.problems()))
        self._running = True
        try:
            return self._run(jobs, on_outcome, need_groups)
        finally:
            self._running = False

    def _setup(self, jobs: list[EpisodeJob]) -> None:
        self._t0 = self.clock.now()
        self._rng = self.clock.random(self.config.seed)
        self._queues: dict[str, collections.deque] = {lane.name: collections.deque() for lane in self.config.lanes}
        self._states: dict[Hashable, _JobState] = {}
        for index, job in enumerate(jobs):
            lane, predicted = self.route(job)
            self._states[job.key] = _JobState(job, index, lane, predicted)
            self._queues[lane].append(job.key)
        n = self.executor.slots
        if n < 1:
            raise SchedulerError("the executor has no slots")
        self._slots = [_Slot(i, self.config.lanes[0].name) for i in range(n)]
        self._live: dict[int, _Live] = {}
        self._next_attempt = 0
        self._busy_s = 0.0
        self._timeline: list[tuple[float, dict[str, tuple[int, int, int]]]] = []
        self._counters = collections.Counter()
        self._max_starting_seen = 0
        self._rebalance(initial=True)

    def _run(self, jobs: list[EpisodeJob], on_outcome, need_groups) -> RunReport:
        self._setup(jobs)
        self._on_outcome, self._need_groups = on_outcome, need_groups
        self._group_members: dict[Hashable, list[Hashable]] = collections.defaultdict(list)
        for job in jobs:
            self._group_members[job.group].append(job.key)
        self._finished_groups: list[Hashable] = []
        self._dropping = False
        interrupted: BaseException | None = None
        while True:
            try:
                with self._cond:
                    events = list(self._inbox)
                    self._inbox.clear()
                now = self.clock.now()
                for event in events:
                    self._handle(event, now)
                self._expire(now)
                self._check_groups(now)
                self._rebalance()
                self._dispatch(now)
                self._launch_due(now)
                self._sample(now)
                if self.observer is not None:
                    self.observer(self)
                if self._finished():
                    break
                wake = self._next_timer()
                with self._cond:
                    if not self._inbox:
                        timeout = None if wake is None else max(0.0, wake - self.clock.now())
                        self.clock.wait(self._cond, timeout)
            except KeyboardInterrupt as exc:  # stop cleanly: cut what runs, keep what finished
                interrupted = exc
                self._stop_all("interrupted", self.clock.now())
        report = self._report()
        if interrupted is not None:
            raise interrupted
        return report

    # ------------------------------------------------------------------ events
    def _handle(self, event: tuple, now: float) -> None:
        kind, attempt_id = event[0], event[1]
        live = self._live.get(attempt_id)
        if live is None:
            self._counters["stale_reports"] += 1  # an attempt already abandoned: never a second outcome
            return
        if kind == "phase":
            if event[2] != live.phase:
                live.phase = event[2]
                if live.cut_at is None:
                    live.deadline = now + live.attempt.deadlines.budget(live.phase)
            return
        value, error = event[2], event[3]
        self._release(live, now)
        if live.cut_at is not None:
            return  # the outcome was decided when it was cut; this only says the work stopped
        state = self._states[live.attempt.job.key]
        duration = now - live.started_at
        if is_infrastructure_failure(value, error):
            why = _describe(error) if error is not None else _masked_reason(value)
            self._counters["infrastructure_failures"] += 1
            self._retry_or_fail(state, live, now, why, value)
            return
        self._observe(state, duration)
        if error is not None:
            self._emit(state, live, now, "error", error=_describe(error))
        else:
            self._emit(state, live, now, "ok", value=value)

    def _observe(self, state: _JobState, duration: float) -> None:
        """Learn from a duration; when the task's prediction now belongs to another lane, its
        queued jobs move there (in submission order), so a task whose document guessed wrong stops
        holding up the short lane after its first runs."""
        task_id = state.job.task_id
        before = self.route(state.job)[0]
        self.predictor.observe(task_id, duration, state.job.expected_duration_s)
        if self.route(state.job)[0] == before:
            return
        moved: dict[str, list[Hashable]] = collections.defaultdict(list)
        for lane_name, queue in self._queues.items():
            for key in queue:
                other = self._states[key]
                if other.job.task_id != task_id:
                    continue
                lane, predicted = self.route(other.job)
                other.predicted_s = predicted
                if lane != lane_name:
                    other.lane = lane
                    moved[lane_name].append(key)
        for lane_name, keys in moved.items():
            gone = set(keys)
            self._queues[lane_name] = collections.deque(k for k in self._queues[lane_name] if k not in gone)
            for key in keys:
                self._queues[self._states[key].lane].append(key)
            self._counters["rerouted"] += len(keys)
        for lane_name in {self._states[k].lane for keys in moved.values() for k in keys}:
            self._queues[lane_name] = collections.deque(sorted(self._queues[lane_name],
                                                               key=lambda k: self._states[k].index))

    def _retry_or_fail(self, state: _JobState, live: _Live, now: float, why: str, value: Any = None) -> None:
        if state.attempts <= self.config.retries and not self._dropping:
            self._counters["retries"] += 1
            if value is not None:
                state.retried.append(value)
            self._queues[state.lane].appendleft(state.job.key)  # it waited already: first in line
            return
        self._emit(state, live, now, "infrastructure", value=value, error=why)

    def _expire(self, now: float) -> None:
        for live in list(self._live.values()):
            if live.cut_at is not None:
                if now + _EPS >= live.cut_at + self.config.cancel_grace_s:
                    self._counters["abandoned"] += 1
                    self.executor.abandon(live.attempt)
                    self._release(live, now)
                continue
            if not live.launched or now + _EPS < live.deadline:
                continue
            state = self._states[live.attempt.job.key]
            self._cut(live, now)
            if live.phase == "start":
                self._counters["start_timeouts"] += 1
                self._retry_or_fail(state, live, now, f"sandbox start took longer than "
                                    f"{live.attempt.deadlines.start_s:g} s (deadline of the start phase)")
            else:
                self._counters["timeouts"] += 1
                self._observe(state, now - live.started_at)
                budget = live.attempt.deadlines.budget(live.phase)
                self._emit(state, live, now, "timeout", phase=live.phase,
                           error=f"cut at the {live.phase} deadline ({budget:g} s)")

    def _cut(self, live: _Live, now: float) -> None:
        live.cut_at = now
        if live.launched:
            self.executor.cancel(live.attempt)
        else:  # still waiting out its jitter: it never started, nothing to stop
            self._release(live, now)

    def _release(self, live: _Live, now: float) -> None:
        self._live.pop(live.attempt.id, None)
        slot = self._slots[live.attempt.slot]
        if slot.attempt == live.attempt.id:
            if live.launched:
                self._busy_s += now - slot.busy_since
            slot.attempt = None

    # ------------------------------------------------------------------ outcomes and groups
    def _emit(self, state: _JobState, live: _Live | None, now: float, status: str, value: Any = None,
              error: str | None = None, phase: str | None = None) -> None:
        if state.outcome is not None:
            raise AssertionError(f"job {state.job.key!r} got a second outcome")  # never: one outcome per job
        state.outcome = EpisodeOutcome(
            key=state.job.key, task_id=state.job.task_id, status=status, value=value, error=error, phase=phase,
            lane=state.lane, predicted_s=state.predicted_s, attempts=state.attempts,
            slot=live.attempt.slot if live else None, stolen=bool(live and live.stolen),
            submitted_at=0.0, started_at=None if state.first_started is None else state.first_started - self._t0,
            finished_at=now - self._t0, duration_s=(now - live.started_at) if live and live.launched else 0.0,
            group=state.job.group, retried=tuple(state.retried))
        self._counters[status] += 1
        if self._need_groups is None:
            self._report_outcome(state.outcome)
            return
        group = state.job.group
        if (not self._dropping and len(self._finished_groups) < self._need_groups
                and all(self._states[k].outcome is not None for k in self._group_members[group])):
            self._finished_groups.append(group)
            for key in self._group_members[group]:
                self._states[key].outcome = replace(self._states[key].outcome, selected=True)
                self._report_outcome(self._states[key].outcome)

    def _report_outcome(self, outcome: EpisodeOutcome) -> None:
        if self._on_outcome is not None:
            self._on_outcome(outcome)

    def _check_groups(self, now: float) -> None:
        if self._need_groups is None or self._dropping or len(self._finished_groups) < self._need_groups:
            return
        self._dropping = True  # the first N groups are in: cancel every other attempt cleanly
        self._stop_all("cancelled", now)
        for group, members in self._group_members.items():
            if group in self._finished_groups:
                continue
            for key in members:
                state = self._states[key]
                state.outcome = replace(state.outcome, selected=False)
                self._report_outcome(state.outcome)

    def _stop_all(self, why: str, now: float) -> None:
        self._dropping = True
        for queue in self._queues.values():
            while queue:
                state = self._states[queue.popleft()]
                self._emit(state, None, now, "cancelled", error=why)
        for live in list(self._live.values()):
            if live.cut_at is None:
                state = self._states[live.attempt.job.key]
                self._cut(live, now)
                self._emit(state, live, now, "cancelled", error=why)

    # ------------------------------------------------------------------ lanes
    def _demand(self) -> dict[str, int]:
        demand = {name: len(q) for name, q in self._queues.items()}
        for live in self._live.values():
            if live.cut_at is None:
                demand[self._states[live.attempt.job.key].lane] += 1
        return demand

    def targets(self) -> dict[str, int]:
        """Slots each lane should own now: one for each lane with work; then each lane's minimum; then
        the rest to the shortest lanes first, each up to its demand (queued plus running) and its
        maximum. So a short episode waits only for other short episodes, and a longer lane's
        ``min_workers`` is the capacity that keeps its tail moving while short work floods in."""
        total = len(self._slots)
        lanes = self.config.lanes
        demand = self._demand()
        cap = {lane.name: (lane.max_workers if lane.max_workers is not None else total) for lane in lanes}
        target = {lane.name: 0 for lane in lanes}
        spare = total
        for lane in lanes:  # no lane with work is starved: one slot each first, shortest lanes first
            if spare > 0 and demand[lane.name] > 0:
                target[lane.name] = 1
                spare -= 1
        for lane in lanes:  # then the minimums, while slots last
            add = max(0, min(spare, lane.min_workers - target[lane.name]))
            target[lane.name] += add
            spare -= add
        for lane in lanes:  # then shortest lanes first, each up to its demand and maximum
            add = max(0, min(spare, cap[lane.name] - target[lane.name], demand[lane.name] - target[lane.name]))
            target[lane.name] += add
            spare -= add
        return target

    def _rebalance(self, initial: bool = False) -> None:
        target = self.targets()
        owned = collections.Counter(s.home for s in self._slots)
        # Move idle slots first, then busy ones (they change lanes when their attempt ends).
        for slot in sorted(self._slots, key=lambda s: s.attempt is not None):
            if not initial and slot.attempt is not None:
                continue
            if owned[slot.home] > target.get(slot.home, 0):
                for lane in self.config.lanes:
                    if owned[lane.name] < target[lane.name]:
                        owned[slot.home] -= 1
                        slot.home = lane.name
                        owned[lane.name] += 1
                        break

    # ------------------------------------------------------------------ dispatch
    def _admission_open(self) -> bool:
        return self.starting() < self.config.max_starting

    def _dispatch(self, now: float) -> None:
        if self._dropping:
            return
        idle = [s for s in self._slots if s.attempt is None]
        order = {lane.name: i for i, lane in enumerate(self.config.lanes)}
        idle.sort(key=lambda s: (order[s.home], s.id))
        waiting = sum(len(q) for q in self._queues.values())
        # Home lanes first: every idle slot takes its own lane's work before anyone steals.
        assigned: list[int] = []
        for steal in (False, True):
            for slot in idle:
                if slot.attempt is not None or not self._admission_open():
                    continue
                lane = self._pick_lane(slot, steal)
                if lane is None:
                    continue
                key = self._queues[lane].popleft()
                self._assign(slot, self._states[key], now, now, stolen=steal)
                assigned.append(slot.attempt)
        # A burst (several starts at one instant while more than max_starting wait) is spread out;
        # a slot that frees up alone takes its next attempt at once.
        if len(assigned) > 1 and waiting > self.config.max_starting:
            for attempt_id in assigned:
                live = self._live[attempt_id]
                live.start_at = live.started_at = now + self._rng.uniform(0, self.config.burst_jitter_s)

    def _pick_lane(self, slot: _Slot, steal: bool) -> str | None:
        if not steal:
            return slot.home if self._queues[slot.home] else None
        home = self._lanes[slot.home]
        if home.reserve:
            idle_home = sum(1 for s in self._slots if s.home == slot.home and s.attempt is None)
            if idle_home <= home.reserve:
                return None
        candidates = [name for name, q in self._queues.items() if q and name != slot.home]
        if not candidates:
            return None
        owned = collections.Counter(s.home for s in self._slots)
        # The lane whose queue is longest for the slots it owns is the most starved.
        return max(candidates, key=lambda n: len(self._queues[n]) / max(1, owned[n]))

    def _assign(self, slot: _Slot, state: _JobState, now: float, start_at: float, stolen: bool) -> None:
        attempt = Attempt(self._next_attempt, state.job, state.attempts, state.lane, slot.id,
                          state.job.deadlines or self.config.deadlines)
        self._next_attempt += 1
        state.attempts += 1
        slot.attempt = attempt.id
        live = _Live(attempt, "start", math.inf, start_at, start_at, stolen=stolen)
        self._live[attempt.id] = live
        if stolen:
            self._counters["stolen"] += 1

    def _launch_due(self, now: float) -> None:
        for live in sorted(self._live.values(), key=lambda l: l.attempt.id):
            if live.launched or live.cut_at is not None or live.start_at > now + _EPS:
                continue
            live.launched, live.started_at = True, now
            live.deadline = now + live.attempt.deadlines.start_s
            slot = self._slots[live.attempt.slot]
            slot.busy_since = now
            state = self._states[live.attempt.job.key]
            if state.first_started is None:
                state.first_started = now
            self._max_starting_seen = max(self._max_starting_seen, self.starting())
            try:
                self.executor.start(live.attempt, self._events)
            except Exception as exc:  # the executor could not take it: the machinery's failure
                self._release(live, now)
                self._counters["infrastructure_failures"] += 1
                self._retry_or_fail(state, live, now, f"the executor refused the attempt: {_describe(exc)}")

    def _next_timer(self) -> float | None:
        times = []
        for live in self._live.values():
            if live.cut_at is not None:
                times.append(live.cut_at + self.config.cancel_grace_s)
            elif not live.launched:
                times.append(live.start_at)
            else:
                times.append(live.deadline)
        return min(times) if times else None

    def _finished(self) -> bool:
        return not self._live and all(s.outcome is not None for s in self._states.values())

    # ------------------------------------------------------------------ reporting
    def _sample(self, now: float) -> None:
        running = collections.Counter(self._states[l.attempt.job.key].lane for l in self._live.values()
                                      if l.cut_at is None)
        owned = collections.Counter(s.home for s in self._slots)
        point = {lane.name: (owned[lane.name], running[lane.name], len(self._queues[lane.name]))
                 for lane in self.config.lanes}
        if not self._timeline or self._timeline[-1][1] != point:
            self._timeline.append((now - self._t0, point))

    def _report(self) -> RunReport:
        now = self.clock.now()
        outcomes = sorted((s.outcome for s in self._states.values() if s.outcome is not None),
                          key=lambda o: self._states[o.key].index)
        over = None
        if self._need_groups is not None:
            dropped = tuple(g for g in self._group_members if g not in self._finished_groups)

            def mean_predicted(groups: Sequence[Hashable]) -> float | None:
                values = [self._states[k].predicted_s for g in groups for k in self._group_members[g]]
                return sum(values) / len(values) if values else None

            selected = tuple(self._finished_groups)
            over = OverProvision(len(self._group_members), self._need_groups, selected=selected, dropped=dropped,
                                 selected_mean_predicted_s=mean_predicted(selected),
                                 dropped_mean_predicted_s=mean_predicted(dropped))
        counters = dict(self._counters)
        counters["max_starting_seen"] = self._max_starting_seen
        return RunReport(outcomes, now - self._t0, len(self._slots), self._busy_s, self._timeline, counters, over,
                         self.predictor.state())


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _masked_reason(value: Any) -> str:
    reason = value.get("infra_error") if isinstance(value, Mapping) else getattr(value, "infra_error", None)
    return str(reason or "the result is masked (reward_masked)")
