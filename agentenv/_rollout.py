"""Real episodes as scheduler work: one sandboxed episode per attempt, cut cleanly at a deadline.

:class:`EpisodeWork` is the work callable that eval, audit and training hand to an executor: it
builds the environment with ``gym.make`` (one per slot and task, reused across that slot's
episodes), the agent with :func:`agentenv.make_agent`, and plays the episode with
:func:`agentenv.run_episode`. It reports the phases to the scheduler (``agent`` once the sandbox is
up, ``scoring`` before the step that evaluates) and tracks every sandbox the episode opens, so a
cancellation kills them at once, even in the middle of a command, and nothing outlives the attempt.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym

from ._backends import get_backend
from ._episode import EpisodeResult, make_agent, run_episode
from ._errors import SandboxError
from ._extension import Agent
from ._registration import GENERIC_ID
from ._sandbox import Availability, Sandbox, SandboxBackend
from ._scheduler import AttemptContext, Deadlines, EpisodeJob
from ._spec import SINGLE_SHOT, Mode, TaskSpec

@dataclass(frozen=True)
class RolloutRequest:
    """What one episode needs: the task, its mode, its sample number and seed."""

    task: TaskSpec
    mode: Mode
    sample: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.task.task_id, self.sample)


@dataclass
class Rollout:
    """The result of one attempt: the episode, and its trajectory records when asked for."""

    task_id: str
    sample: int
    seed: int
    mode: Mode
    episode: EpisodeResult
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def reward_masked(self) -> bool:  # the scheduler's retry rule reads this
        return bool(self.episode.reward_masked)

    @property
    def infra_error(self) -> str | None:
        return self.episode.infra_error

    def summary(self) -> dict[str, Any]:
        """What must not depend on the number of workers or lanes (timings excluded)."""
        e = self.episode
        return {"task_id": self.task_id, "sample": self.sample, "seed": self.seed, "mode": self.mode,
                "reward": e.reward, "score": e.score, "success": e.success, "rounds": e.rounds,
                "terminated": e.terminated, "truncated": e.truncated, "reward_masked": e.reward_masked}


def task_deadlines(task: TaskSpec, mode: Mode, start_s: float = 120.0, agent_step_s: float = 60.0,
                   scoring_margin_s: float = 30.0) -> Deadlines:
    """Phase budgets from a task's own limits: the agent gets ``agent_step_s`` to choose each action
    plus the command wall-time of each round; scoring gets the wall-time of each scored step plus a
    margin (the scoring buffer a sandbox keeps past the rollout deadline)."""
    wall = float(task.limits.wall_time_s)
    rounds = 1 if mode == SINGLE_SHOT else int(task.max_rounds)
    scored = max(1, sum(1 for step in task.execution_steps if step.get("action") == "run_command"))
    return Deadlines(start_s=start_s, agent_s=rounds * (agent_step_s + wall),
                     scoring_s=scored * wall + scoring_margin_s)


def rollout_job(task: TaskSpec, sample: int, mode: Mode, seed: int, deadlines: Deadlines | None = None,
                group: Any = None) -> EpisodeJob:
    """The scheduler job of sample *sample* of *task* (key ``(task_id, sample)``)."""
    return EpisodeJob(key=(task.task_id, sample), task_id=task.task_id,
                      payload=RolloutRequest(task, mode, sample, seed),
                      expected_duration_s=task.expected_duration_s,
                      deadlines=deadlines or task_deadlines(task, mode), group=group)


class EpisodeWork:
    """``work(request, ctx) -> Rollout``: one episode of *agent* (``NAME[:ARG]`` as on the command
    line, or a callable ``(task, mode) -> Agent``) on the request's task. Picklable when the agent
    is given by name, so a distributed executor can ship it once to each worker."""

    def __init__(self, agent: str | Callable[[TaskSpec, Mode], Agent], backend: str | SandboxBackend = "auto",
                 reward_mode: str = "terminal", record_trajectory: bool = False,
                 env_kwargs: dict[str, Any] | None = None, reuse_agents: bool = False):
        self.agent, self.backend, self.reward_mode = agent, backend, reward_mode
        self.record_trajectory = record_trajectory
        self.env_kwargs = dict(env_kwargs or {})
        #: keep one agent per slot and task (agents that start a process or a connection); the
        #: default builds one per episode, so that no episode's result depends on which slot ran
        #: it or what that slot ran before
        self.reuse_agents = reuse_agents

    def __call__(self, request: RolloutRequest, ctx: AttemptContext) -> Rollout:
        slot_env = self._env_for(request, ctx)
        tracker, records = slot_env.tracker, slot_env.records
        records.clear()
        generation = tracker.begin()
        ctx.on_cancel(lambda: tracker.kill_all(generation))  # a late cancel never reaches a later episode
        agent, finished = slot_env.agent if self.reuse_agents else None, False
        try:
            if agent is None:
                agent = (self.agent(request.task, request.mode) if callable(self.agent)
                         else make_agent(self.agent, request.task, request.mode))
            phased = _PhasedAgent(agent, ctx, slot_env.env.unwrapped.max_rounds, request.mode)
            episode = run_episode(slot_env.env, phased, seed=request.seed, sample=request.sample)
            finished = not ctx.cancelled
        finally:
            tracker.end()
            if self.reuse_agents and finished:
                slot_env.agent = agent
            else:  # a cut or failed episode leaves its agent mid-way: never reused
                slot_env.agent = None
                _close(agent)
        return Rollout(request.task.task_id, request.sample, request.seed, request.mode, episode,
                       list(records) if self.record_trajectory else [])

    def _env_for(self, request: RolloutRequest, ctx: AttemptContext) -> "_SlotEnv":
        key = (request.task.task_id, request.task.version, request.mode, id(request.task))
        cached = ctx.local.get("agentenv.episode_env")
        if cached is not None and cached.key == key:
            return cached
        if cached is not None:
            cached.close()
            del ctx.local["agentenv.episode_env"]
        inner = get_backend(self.backend) if isinstance(self.backend, str) else self.backend
        tracker = _TrackingBackend(inner)
        records: list[dict[str, Any]] = []
        env = gym.make(GENERIC_ID, task=request.task, backend=tracker, mode=request.mode,
                       reward_mode=self.reward_mode, trajectory=records.append if self.record_trajectory else None,
                       **self.env_kwargs)
        slot_env = _SlotEnv(key, env, tracker, records)
        ctx.local["agentenv.episode_env"] = slot_env
        return slot_env


@dataclass
class _SlotEnv:
    key: tuple
    env: Any
    tracker: "_TrackingBackend"
    records: list
    agent: Any = None

    def close(self) -> None:
        _close(self.agent)
        self.agent = None
        self.env.close()


def _close(agent: Any) -> None:
    if agent is not None and callable(getattr(agent, "close", None)):
        agent.close()


class _TrackingBackend(SandboxBackend):
    """Wraps the real backend and remembers every sandbox an attempt opens, so a cancellation can
    kill them all, including one that is opening right now (it is closed as soon as it exists)."""

    name = "tracking"

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = inner.name  # what episodes report as their backend
        self._boxes: list[Any] = []
        self._cancelled = False
        self._generation = 0
        self._lock = threading.Lock()

    @classmethod
    def availability(cls) -> Availability:
        return Availability(True)

    def begin(self) -> int:
        """Start tracking a new attempt; returns its generation (what :meth:`kill_all` names)."""
        with self._lock:
            self._boxes, self._cancelled = [], False
            self._generation += 1
            return self._generation

    def end(self) -> None:
        with self._lock:
            self._boxes = []

    def open(self, request: Any) -> Any:
        with self._lock:
            if self._cancelled:
                raise SandboxError("the attempt was cancelled (its deadline passed)")
        box = self.inner.open(request)
        with self._lock:
            if not self._cancelled:
                self._boxes.append(box)
                return box
        _kill(box)
        raise SandboxError("the attempt was cancelled (its deadline passed)")

    def kill_all(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # that attempt is over; its sandboxes were closed by its own episode
            self._cancelled = True
            boxes, self._boxes = self._boxes, []
        for box in boxes:
            _kill(box)

    def close(self) -> None:  # the real backend is shared: never closed from here
        pass


def _kill(box: Sandbox) -> None:
    """Stop a sandbox now, even in the middle of a command (``Sandbox.kill``)."""
    box.kill()


class _PhasedAgent(Agent):
    """Reports the episode's phases around the real agent: ``agent`` when the episode's sandbox is
    up (reset), ``scoring`` before the step that evaluates (single-shot's only step, ``submit``, or
    the last round)."""

    def __init__(self, inner: Agent, ctx: AttemptContext, max_rounds: int, mode: Mode):
        self.inner, self.ctx, self.max_rounds, self.mode = inner, ctx, max_rounds, mode
        self.name = getattr(inner, "name", "agent")
        self.rounds = 0

    def reset(self, task: TaskSpec, mode: Mode, seed: int | None = None) -> None:
        self.ctx.enter("agent")
        self.rounds = 0
        self.inner.sample = self.sample  # the sample run_episode gave: the real agent plays it
        self.inner.reset(task, mode, seed)

    def act(self, observation: Any, info: Any) -> Any:
        action = self.inner.act(observation, info)
        self.rounds += 1
        if self.mode == SINGLE_SHOT or self.rounds >= self.max_rounds or _is_submit(action):
            self.ctx.enter("scoring")
        return action


def _is_submit(action: Any) -> bool:
    if isinstance(action, (str, bytes, bytearray)):
        try:
            action = json.loads(action)
        except (ValueError, RecursionError):
            return False
    return isinstance(action, dict) and action.get("action") == "submit"
