"""Async environments and the batched rollout entry point for trainers.

:class:`AsyncCodingEnv` gives ``await reset()`` / ``await step()`` on a :class:`CodingEnv` (or its
:class:`ChatEnv`): every call that touches a sandbox runs on a worker thread, so the event loop that
also talks to an inference server never blocks. Threads, not a rewrite: the sandbox protocol is a
socket per sandbox and the work happens in other processes, so a waiting thread holds no CPU and
no GIL.

:class:`RolloutPool` is what a trainer calls once per batch: N prompts x G samples (a GRPO group),
all concurrent under one limit (:mod:`agentenv._concurrency`), rewards returned in the order asked.
``score()`` scores given completions (single-shot); ``rollout()`` drives a policy (an async or sync
callable from chat messages and tools to an assistant message) through whole episodes, agentic or
single-shot. The G samples of a group share their seed and, with ``prefix``, a list of actions
played before the policy acts, so all of them start from the same task state. Environments are
kept per task and reused across episodes (``reset()`` is a message to a warm sandbox); an episode
hit by an infrastructure failure is played again (``retries``) and, if it stays masked, comes back
with ``reward_masked=True``: drop it from the update.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import functools
import inspect
import json
import secrets
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ._chat import ChatEnv, resolve_task, tool_name
from ._concurrency import EpisodeSlots, default_concurrency, episode_slots
from ._env import CodingEnv
from ._errors import InfrastructureError
from ._spec import AGENTIC, SINGLE_SHOT, TaskSpec

TRAJECTORY_SCHEMA = "agentenv.trajectory/1"
_SHARED: concurrent.futures.ThreadPoolExecutor | None = None
_SHARED_LOCK = threading.Lock()


def _shared_executor() -> concurrent.futures.ThreadPoolExecutor:
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="agentenv-env")
        return _SHARED


class AsyncCodingEnv:
    """A :class:`CodingEnv` with ``async`` methods that never block the event loop.

    ``AsyncCodingEnv(task, mode=..., ...)`` builds the env on a worker thread at the first
    ``reset()`` (building a runtime may take a while the first time); ``AsyncCodingEnv(env=e)``
    wraps one you made. ``chat=True`` wraps it in :class:`ChatEnv` (observations are messages,
    actions assistant messages). One env runs one call at a time: a second concurrent call is a
    ``RuntimeError``. A call cancelled while its thread runs leaves the env to be closed when that
    thread finishes (it is never reused half-stepped)."""

    def __init__(self, task: TaskSpec | str | None = None, *, env: Any = None, chat: bool = False,
                 executor: concurrent.futures.Executor | None = None, **env_kwargs: Any):
        if (task is None) == (env is None):
            raise TypeError("AsyncCodingEnv needs a task or an env=, not both")
        self._task_ref, self._env_kwargs, self._chat = task, env_kwargs, chat
        self._env = self._wrap(env) if env is not None else None
        self._executor = executor
        self._busy = False
        self.tainted = False  # a call was cancelled while running: the env is closed, not reused
        self.closed = False

    def _wrap(self, env: Any) -> Any:
        return ChatEnv(env) if self._chat and not isinstance(env, ChatEnv) else env

    def _build(self) -> Any:
        if self._env is None:
            self._env = self._wrap(CodingEnv(resolve_task(self._task_ref), **self._env_kwargs))
        return self._env

    @property
    def env(self) -> Any:
        """The wrapped (sync) env; None before the first reset of a lazily built one."""
        return self._env

    @property
    def task(self) -> TaskSpec | None:
        return self._env.unwrapped.task if self._env is not None else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        return getattr(self._env, "tools", [])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return getattr(self._env, "messages", [])

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self.closed or self.tainted:
            raise RuntimeError("this AsyncCodingEnv is closed")
        if self._busy:
            raise RuntimeError("AsyncCodingEnv runs one call at a time; await the previous one first")
        self._busy = True
        future = (self._executor or _shared_executor()).submit(functools.partial(fn, *args, **kwargs))
        future.add_done_callback(lambda _: setattr(self, "_busy", False))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if not future.done():
                self.tainted = True
                future.add_done_callback(lambda _: self._close_now())
            raise

    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        def reset():
            return self._build().reset(seed=seed, options=options)
        return await self._call(reset)

    async def step(self, action: Any):
        if self._env is None:
            raise RuntimeError("call reset() before step()")
        return await self._call(self._env.step, action)

    def _close_now(self) -> None:
        self.closed = True
        if self._env is not None:
            self._env.close()

    async def close(self) -> None:
        if self.closed:
            return
        if self._busy:  # a cancelled call still runs: it closes the env when it ends
            self.tainted = True
            return
        self.closed = True
        if self._env is not None:
            await asyncio.wrap_future((self._executor or _shared_executor()).submit(self._env.close))

    async def __aenter__(self) -> "AsyncCodingEnv":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


# --------------------------------------------------------------------------- results

@dataclass
class BatchRollout:
    """One episode of a batch: its reward and what a trainer logs or filters on."""

    index: int  # position in the returned list
    task_id: str
    group: int  # which prompt (task) of the batch
    sample: int  # which sample of its group
    seed: int
    mode: str
    reward: float  # the episode's return (sum of rewards; terminal mode: the final score)
    score: float
    success: bool
    reward_masked: bool  # an infrastructure failure: do not train on it
    infra_error: str | None
    rounds: int  # policy turns (prefix actions not counted)
    terminated: bool
    truncated: bool
    attempts: int
    wall_time_s: float
    metrics: dict[str, Any] = field(default_factory=dict)
    integrity: dict[str, Any] = field(default_factory=dict)
    reward_breakdown: dict[str, Any] = field(default_factory=dict)
    runtime: dict[str, Any] = field(default_factory=dict)
    #: the chat transcript (system, user, prefix, then the policy's turns and the env's answers)
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: how many leading messages are the starting state (prompt and prefix), not the policy's doing
    prompt_messages: int = 0
    episode_id: str = ""  # the trajectory's episode id (when the pool records a trajectory)


_POLICY = object()


@dataclass
class _Job:
    index: int
    task: TaskSpec
    mode: str
    group: int
    sample: int
    seed: int
    reply: Any = _POLICY
    prefix: tuple[Mapping[str, Any], ...] = ()


class _Sink:
    """Trajectory records of one env, tagged with the job it plays, appended whole under a lock."""

    def __init__(self, writer: "_Writer | None", callback: Callable[[dict], None] | None):
        self.writer, self.callback = writer, callback
        self.tags: dict[str, Any] = {}
        self.episode_id = ""

    def __call__(self, record: dict) -> None:
        record = {**record, **self.tags}
        self.episode_id = record.get("episode_id", self.episode_id)
        if self.writer is not None:
            self.writer.write(record)
        if self.callback is not None:
            self.callback(record)


class _Writer:
    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.file = open(path, "a", encoding="utf-8")

    def write(self, record: dict) -> None:
        line = json.dumps(record) + "\n"
        with self.lock:
            self.file.write(line)
            self.file.flush()

    def close(self) -> None:
        with self.lock:
            self.file.close()


class _LoopThread:
    """An event loop on a daemon thread, for the sync entry points (a trainer's reward function is
    called from plain code, sometimes while another loop runs in the calling thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agentenv-rollouts", daemon=True)
        self.thread.start()

    def run(self, coro: Awaitable[Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


# --------------------------------------------------------------------------- the pool

Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]


class RolloutPool:
    """Batched, concurrent episodes for trainers (see the module docstring).

    *concurrency*: episodes holding a sandbox at once (default: two per core). *trajectory*: a
    JSONL path (or a callable) that receives every record of every episode, tagged with
    ``run_id``/``sample``/``attempt``/``group`` and closed by an ``episode`` record, as
    ``agentenv eval`` writes them: ``agentenv export`` and ``agentenv reverify`` read it.
    Other keyword arguments go to each :class:`CodingEnv` (``backend``, ``reward_mode``,
    ``max_rounds``...)."""

    def __init__(self, *, concurrency: int | None = None, retries: int = 1,
                 trajectory: str | Callable[[dict], None] | None = None, on_no_tool_call: str = "continue",
                 **env_kwargs: Any):
        self.concurrency = concurrency or default_concurrency()
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {self.concurrency}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, not {retries}")
        self.retries = retries
        self.env_kwargs = env_kwargs
        self.on_no_tool_call = on_no_tool_call
        self.run_id = uuid.uuid4().hex[:12]
        self._writer = _Writer(trajectory) if isinstance(trajectory, str) else None
        self._callback = trajectory if callable(trajectory) else None
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=self.concurrency + 2,
                                                               thread_name_prefix="agentenv-rollout")
        self._idle: dict[tuple, list[tuple[AsyncCodingEnv, _Sink]]] = {}
        self._idle_lock = threading.Lock()
        # one limiter per event loop (a limiter binds to its loop); weak, so a finished loop's goes too
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EpisodeSlots] = weakref.WeakKeyDictionary()
        self._peak = 0
        self._tasks: dict[str, TaskSpec] = {}
        self._loop_thread: _LoopThread | None = None
        self.closed = False

    # ---- public entry points
    async def score(self, tasks: Any, completions: Sequence[Any], *, seed: int | None = None) -> list[BatchRollout]:
        """Score completions in sandboxes, single-shot: ``completions[i]`` (text with a fenced code
        block, or an assistant message) answers ``tasks[i]`` (or *tasks*, one task for all)."""
        specs = self._task_list(tasks, len(completions))
        base = seed if seed is not None else secrets.randbelow(2 ** 31)
        jobs = []
        for i, (task, reply) in enumerate(zip(specs, completions)):
            if not task.supports_single_shot:
                raise ValueError(f"task {task.task_id} has no <model_generated_code> step, so a completion cannot "
                                 "be scored single-shot; drive it with rollout(tasks, policy) instead")
            jobs.append(_Job(i, task, "single_shot", i, 0, base, reply))
        return await self._run(jobs, None)

    async def rollout(self, tasks: Any, policy: Policy, *, group_size: int = 1, seed: int | None = None,
                      mode: str | None = None, prefix: Sequence[Any] | None = None) -> list[BatchRollout]:
        """Play ``len(tasks) x group_size`` episodes with *policy*, ``policy(messages, tools)`` ->
        an assistant message (async or not). Results are ordered task by task, sample by sample.
        The samples of a group share a seed (*seed* + the group's index) and *prefix* (a list of
        action objects played first; or one such list per task)."""
        if group_size < 1:
            raise ValueError(f"group_size must be at least 1, not {group_size}")
        specs = self._task_list(tasks, None)
        prefixes = self._prefixes(prefix, len(specs))
        base = seed if seed is not None else secrets.randbelow(2 ** 31)
        jobs = []
        for g, task in enumerate(specs):
            task_mode = mode or (SINGLE_SHOT if task.supports_single_shot else AGENTIC)
            for s in range(group_size):
                jobs.append(_Job(len(jobs), task, task_mode, g, s, (base + g) % 2 ** 31, prefix=prefixes[g]))
        return await self._run(jobs, policy)

    def score_sync(self, tasks: Any, completions: Sequence[Any], **kwargs: Any) -> list[BatchRollout]:
        """:meth:`score` from synchronous code (a trainer's reward function)."""
        return self._sync(self.score(tasks, completions, **kwargs))

    def rollout_sync(self, tasks: Any, policy: Policy, **kwargs: Any) -> list[BatchRollout]:
        return self._sync(self.rollout(tasks, policy, **kwargs))

    @property
    def peak_concurrency(self) -> int:
        """The most episodes that held a slot at once (on any one event loop this pool ran on)."""
        return self._peak

    # ---- the work
    def _sync(self, coro: Awaitable[Any]) -> Any:
        if self._loop_thread is None:
            self._loop_thread = _LoopThread()
        return self._loop_thread.run(coro)

    def _task_list(self, tasks: Any, count: int | None) -> list[TaskSpec]:
        single = isinstance(tasks, (str, TaskSpec)) or hasattr(tasks, "__fspath__")
        refs = [tasks] * (count or 1) if single else list(tasks)
        if count is not None and len(refs) != count:
            raise ValueError(f"{len(refs)} tasks for {count} completions: give one task per completion, or one task")
        return [self._task(ref) for ref in refs]

    def _task(self, ref: Any) -> TaskSpec:
        if isinstance(ref, TaskSpec):
            return ref
        key = str(ref)
        if key not in self._tasks:
            self._tasks[key] = resolve_task(ref)
        return self._tasks[key]

    @staticmethod
    def _prefixes(prefix: Sequence[Any] | None, groups: int) -> list[tuple[Mapping[str, Any], ...]]:
        if not prefix:
            return [()] * groups
        if all(isinstance(p, Mapping) for p in prefix):
            return [tuple(prefix)] * groups
        if len(prefix) != groups or not all(isinstance(p, (list, tuple)) for p in prefix):
            raise ValueError("prefix is a list of action objects (one for all groups) or one such list per task")
        return [tuple(p) for p in prefix]

    async def _run(self, jobs: list[_Job], policy: Policy | None) -> list[BatchRollout]:
        if self.closed:
            raise RuntimeError("this RolloutPool is closed")
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = episode_slots(self.concurrency)
        results: list[BatchRollout | None] = [None] * len(jobs)

        async def one(job: _Job) -> None:
            async with slots.episode(job.task):
                self._peak = max(self._peak, slots.running)
                results[job.index] = await self._episode(job, policy)

        try:
            async with asyncio.TaskGroup() as group:
                for job in jobs:
                    group.create_task(one(job))
        except BaseExceptionGroup as failed:  # a policy's own error: the first one, as the caller raised it
            first = failed.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first
        return results  # type: ignore[return-value]

    def _key(self, task: TaskSpec, mode: str) -> tuple:
        where = task.source if task.source != "<memory>" else f"<memory:{id(task)}>"
        return (where, task.task_id, task.version, mode)

    def _checkout(self, task: TaskSpec, mode: str) -> tuple[AsyncCodingEnv, _Sink]:
        with self._idle_lock:
            idle = self._idle.get(self._key(task, mode))
            if idle:
                return idle.pop()
        sink = _Sink(self._writer, self._callback)
        kwargs = {**self.env_kwargs, "mode": mode}
        if self._writer is not None or self._callback is not None:
            kwargs["trajectory"] = sink

        def build() -> ChatEnv:
            return ChatEnv(CodingEnv(task, **kwargs), on_no_tool_call=self.on_no_tool_call)
        env = AsyncCodingEnv(env=_Lazy(build), chat=False, executor=self._executor)
        return env, sink

    def _checkin(self, task: TaskSpec, mode: str, env: AsyncCodingEnv, sink: _Sink, healthy: bool) -> None:
        if healthy and not env.tainted and not self.closed:
            with self._idle_lock:
                self._idle.setdefault(self._key(task, mode), []).append((env, sink))
        elif not env.tainted:
            self._executor.submit(env._close_now)

    async def _episode(self, job: _Job, policy: Policy | None) -> BatchRollout:
        env, sink = self._checkout(job.task, job.mode)
        healthy = False
        try:
            for attempt in range(self.retries + 1):
                if env.tainted or env.closed:  # the last attempt left it unusable: play the next on a fresh one
                    env, sink = self._checkout(job.task, job.mode)
                sink.tags = {"run_id": self.run_id, "sample": job.sample, "attempt": attempt, "group": job.group}
                result = await self._play(env, sink, job, policy, attempt)
                if not result.reward_masked:
                    break
            healthy = True
            return result
        finally:
            self._checkin(job.task, job.mode, env, sink, healthy)

    async def _play(self, env: AsyncCodingEnv, sink: _Sink, job: _Job, policy: Policy | None,
                    attempt: int) -> BatchRollout:
        start = time.monotonic()
        try:
            _, info = await env.reset(seed=job.seed)
        except InfrastructureError as exc:  # the runtime could not be built: nothing ran, nothing to score
            env.tainted = True
            return BatchRollout(job.index, job.task.task_id, job.group, job.sample, job.seed, job.mode, 0.0, 0.0, False,
                           True, f"{type(exc).__name__}: {exc}", 0, False, False, attempt + 1, time.monotonic() - start)
        total, rounds = 0.0, 0
        terminated = truncated = bool(info.get("reward_masked"))
        for action in job.prefix:
            if terminated or truncated:
                break
            _, reward, terminated, truncated, info = await env.step(_prefix_message(action))
            total += reward
        prompt_messages = len(env.messages)
        while not (terminated or truncated):
            if job.reply is not _POLICY:
                reply = job.reply
            else:
                try:
                    reply = await _ask(policy, env.messages, env.tools, self._executor)
                except InfrastructureError as exc:  # the inference server failed: not the model's doing
                    info = {**info, "reward_masked": True, "infra_error": f"policy: {exc}"}
                    break
            _, reward, terminated, truncated, info = await env.step(reply)
            total += reward
            rounds += 1
        core = env.env.unwrapped
        masked = bool(info.get("reward_masked"))
        result = BatchRollout(
            index=job.index, task_id=job.task.task_id, group=job.group, sample=job.sample, seed=job.seed,
            mode=job.mode, reward=0.0 if masked else float(total), score=float(info.get("score", 0.0)),
            success=bool(info.get("success")) and not masked, reward_masked=masked, infra_error=info.get("infra_error"),
            rounds=rounds, terminated=terminated, truncated=truncated, attempts=attempt + 1,
            wall_time_s=time.monotonic() - start, metrics=dict(info.get("metrics") or {}),
            integrity=dict(info.get("integrity") or {}), reward_breakdown=dict(info.get("reward_breakdown") or {}),
            runtime=dict(info.get("runtime") or {}), messages=copy.deepcopy(env.messages),
            prompt_messages=prompt_messages, episode_id=sink.episode_id)
        if masked and not (terminated or truncated):
            env.tainted = True  # left mid-episode (the policy failed): never reused half-played
            await asyncio.wrap_future(self._executor.submit(env._close_now))
        if sink.writer is not None or sink.callback is not None:
            sink(_episode_record(result, core, self.run_id))
        return result

    # ---- closing
    async def aclose(self) -> None:
        self.closed = True
        with self._idle_lock:
            envs = [env for idle in self._idle.values() for env, _ in idle]
            self._idle.clear()
        for env in envs:
            await env.close()
        self._executor.shutdown(wait=True)
        if self._writer is not None:
            self._writer.close()

    def close(self) -> None:
        """Close every kept environment (and the sync helper's loop). Idempotent."""
        if self.closed and self._loop_thread is None:
            return
        if self._loop_thread is not None:
            if not self.closed:
                self._loop_thread.run(self.aclose())
            self._loop_thread.stop()
            self._loop_thread = None
        elif not self.closed:
            asyncio.run(self.aclose())

    async def __aenter__(self) -> "RolloutPool":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def __enter__(self) -> "RolloutPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Lazy:
    """An env built on first use, on the worker thread (construction prepares the runtime)."""

    def __init__(self, build: Callable[[], Any]):
        self._build, self._env = build, None

    def _get(self) -> Any:
        if self._env is None:
            self._env = self._build()
        return self._env

    def reset(self, **kwargs: Any) -> Any:
        return self._get().reset(**kwargs)

    def step(self, action: Any) -> Any:
        return self._get().step(action)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()

    @property
    def unwrapped(self) -> Any:
        return self._get().unwrapped

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._get().tools

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self._env.messages if self._env is not None else []


async def _ask(policy: Policy | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               executor: concurrent.futures.Executor) -> Any:
    if policy is None:
        raise TypeError("no policy given")
    snapshot = copy.deepcopy(messages)
    if inspect.iscoroutinefunction(policy) or inspect.iscoroutinefunction(getattr(policy, "__call__", None)):
        return await policy(snapshot, tools)
    value = await asyncio.wrap_future(executor.submit(policy, snapshot, tools))
    return await value if inspect.isawaitable(value) else value


def _prefix_message(action: Mapping[str, Any]) -> dict[str, Any]:
    """A prefix action as the assistant tool call that would have made it."""
    args = {k: v for k, v in action.items() if k != "action"}
    return {"role": "assistant", "content": "", "tool_calls": [{
        "id": "prefix_" + uuid.uuid4().hex[:8], "type": "function",
        "function": {"name": tool_name(str(action.get("action", ""))), "arguments": json.dumps(args)}}]}


def _episode_record(result: BatchRollout, core: Any, run_id: str) -> dict[str, Any]:
    cause = None if result.success else "infrastructure" if result.reward_masked else \
        "max_rounds" if result.truncated else "unsolved"
    return {"type": "episode", "schema": TRAJECTORY_SCHEMA, "run_id": run_id, "task_id": result.task_id,
            "env_id": core.task.env_id, "mode": result.mode, "sample": result.sample, "attempt": result.attempts - 1,
            "group": result.group, "seed": result.seed, "success": result.success, "reward": result.reward,
            "score": result.score, "rounds": result.rounds, "wall_time_s": result.wall_time_s, "cause": cause,
            "error": result.infra_error, "reward_masked": result.reward_masked, "runtime": result.runtime,
            "backend": core.backend_name, "episode_id": result.episode_id}
