"""The evaluation harness behind ``agentenv eval``: N episodes per task on the episode scheduler.

Every (task, sample) is one job of :class:`agentenv.Scheduler`: routed to a lane by its predicted
duration (short episodes never wait behind long ones), cut at its phase deadlines (cause
``timeout``: the agent's failure, scored 0), retried on infrastructure failures only, run by an
executor (``local`` threads, or ``ray`` with agentenv-ray) with W concurrent episodes. Episodes are
written to ``trajectories.jsonl`` whole, each followed by one ``episode`` record (with the lane and
the predicted duration that routed it); so the file is usable after a Ctrl-C at any point, and
``--resume`` redoes exactly the (task, sample) pairs that have no ``episode`` record. The first
line is a ``run`` record: a resumed run must match it.

Results never depend on the number of workers, the lanes or the order episodes ran in: each sample
has its own seed, and an agent that replays recordings plays the sample it is given.
An infrastructure failure that persists counts under the cause ``infrastructure`` and is left out
of every score. Every other exception from an agent is the agent's failure (``agent_error``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import math
import os
import sys
import threading
import time
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence


import agentenv
from agentenv import (AGENTIC, CAUSES, SINGLE_SHOT, TRAJECTORY_SCHEMA, EvalError, Mode, Suite, TaskSpec,
                      TrajectoryWriter, load_task, read_jsonl)

RESULT_SCHEMA = "agentenv.result/1"

# --------------------------------------------------------------------------- statistics

def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k); None when n < k."""
    if n < k or k < 1:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


# --------------------------------------------------------------------------- configuration

@dataclass
class EvalConfig:
    suite: Suite
    agent: str
    out: str
    samples: int = 1
    ks: tuple[int, ...] = (1,)
    workers: int | None = None  # None: the executor's default (local: one per core; ray: one per cluster CPU)
    backend: Any = "auto"  # a backend name, or a SandboxBackend instance (Python API)
    mode: Mode | None = None  # None: single_shot when the task has a placeholder, else agentic
    reward_mode: str = "terminal"
    retries: int = 2
    seed: int = 0
    tasks: tuple[str, ...] = ()  # task-id glob patterns; empty = every task
    resume: bool = False
    progress: bool = True
    executor: str = "local"  # a registered executor (agentenv plugins lists them): local, ray
    address: str | None = None  # the executor's cluster (ray), None: a local one
    lanes: bool = True  # False: first come, first served (one lane)
    #: what each episode measures besides its reward's metrics: "reward" (nothing on demand),
    #: "all", or metric names (``CodingEnv(metrics=...)``)
    metrics: str | tuple[str, ...] = "reward"

    def validate(self) -> None:
        if self.samples < 1:
            raise EvalError(f"--samples must be at least 1, not {self.samples}")
        if self.workers is not None and self.workers < 1:
            raise EvalError(f"--workers must be at least 1, not {self.workers}")
        if not self.ks or min(self.ks) < 1:
            raise EvalError(f"-k takes positive integers such as 1,5,10, not {','.join(map(str, self.ks))}")
        if max(self.ks) > self.samples:
            raise EvalError(f"pass@{max(self.ks)} needs at least {max(self.ks)} samples per task; "
                            f"raise --samples to {max(self.ks)} or drop k={max(self.ks)} from -k")
        if self.retries < 0:
            raise EvalError("--retries must be 0 or more")
        agentenv.registry().executor(self.executor)  # an unknown name says which exist


def task_mode(task: TaskSpec, mode: Mode | None) -> Mode:
    if mode is None:
        return SINGLE_SHOT if task.single_shot_path else AGENTIC
    if mode == SINGLE_SHOT and not task.single_shot_path:
        raise EvalError(f"task {task.task_id} ({task.source}) has no <model_generated_code> step, so it cannot "
                        "run with --mode single_shot; use --mode agentic or leave --mode out")
    return mode


def episode_seed(base: int, task_id: str, sample: int) -> int:
    return (base * 1_000_003 + zlib.crc32(f"{task_id}#{sample}".encode())) % (2 ** 31)


# --------------------------------------------------------------------------- progress

class Progress:
    """One status line on stderr: done / running / failed, episodes per second, ETA."""

    def __init__(self, total: int, already: int, enabled: bool, stream=None):
        self.total, self.already = total, already
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self.done = self.failed = self.infra = self.running = self.retried = 0
        #: unsuccessful episodes by cause, named as results.json names them (agentenv.CAUSES)
        self.causes: dict[str, int] = {}
        self.lock = threading.Lock()
        self._last_print = 0.0

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = self.total - self.already - self.done
        eta = f"{int(left / rate) // 60}:{int(left / rate) % 60:02d}" if rate > 0 else "?"
        causes = ", ".join(f"{self.causes[c]} {c}" for c in CAUSES if self.causes.get(c)) or "0 failed"
        return (f"[eval] {self.already + self.done}/{self.total} done, {self.running} running, "
                f"{causes} ({self.retried} retried) | {rate:.2f} ep/s | ETA {eta}")

    def update(self, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and not self.tty and now - self._last_print < 2.0:
            return  # a log file gets a line every 2 s, not a line per refresh
        self._last_print = now
        end = "\n" if final or not self.tty else ""
        self.stream.write(("\r\x1b[K" if self.tty else "") + self.line() + end)
        self.stream.flush()


# --------------------------------------------------------------------------- the run

@dataclass
class EvalOutcome:
    results: dict[str, Any]
    episodes_run: int
    interrupted: bool = False
    paths: dict[str, str] = field(default_factory=dict)


def _run_record(config: EvalConfig, run_id: str) -> dict[str, Any]:
    backend = config.backend if isinstance(config.backend, str) else config.backend.name
    return {"type": "run", "schema": TRAJECTORY_SCHEMA, "run_id": run_id, "time": time.time(),
            "agentenv_version": agentenv.__version__, "agent": config.agent,
            "suite": {"name": config.suite.name, "version": config.suite.version},
            "mode": config.mode, "reward_mode": config.reward_mode, "backend": backend, "seed": config.seed}


def _check_resumable(path: str, previous: dict[str, Any], current: dict[str, Any]) -> None:
    for key in ("agent", "mode", "reward_mode", "seed"):
        if previous.get(key) != current.get(key):
            raise EvalError(f"{path} was written by a run with {key}={previous.get(key)!r}, this one has "
                            f"{key}={current.get(key)!r}; use the same arguments to --resume, or another --out")
    if previous.get("suite") != current.get("suite"):
        raise EvalError(f"{path} holds suite {previous.get('suite')}, not {current.get('suite')}; "
                        "use another --out for another suite (version)")


def select_tasks(suite: Suite, patterns: Sequence[str]) -> list[TaskSpec]:
    tasks = suite.load()
    if patterns:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(t.task_id, p) for p in patterns)]
        if not tasks:
            raise EvalError(f"no task of suite {suite.name} matches --tasks {','.join(patterns)}")
    if not tasks:
        raise EvalError(f"suite {suite.name} ({suite.path}) has no tasks")
    return tasks


def first_task(suite: Suite, patterns: Sequence[str]) -> TaskSpec:
    """The first task a run plays, reading no more task files than it takes to find it."""
    for path in suite.task_files:
        task = load_task(path, suite=suite.name)
        if not patterns or any(fnmatch.fnmatchcase(task.task_id, p) for p in patterns):
            return task
    return select_tasks(suite, patterns)[0]  # raises: nothing matches


def run_eval(config: EvalConfig, on_progress: Callable[[Progress], None] | None = None) -> EvalOutcome:
    """Run (or resume) an evaluation and write ``trajectories.jsonl`` and ``results.json`` in ``config.out``."""
    config.validate()
    tasks = select_tasks(config.suite, config.tasks)
    os.makedirs(config.out, exist_ok=True)
    traj_path = os.path.join(config.out, "trajectories.jsonl")
    results_path = os.path.join(config.out, "results.json")
    run_id = uuid.uuid4().hex[:12]
    header = _run_record(config, run_id)
    previous = read_jsonl(traj_path)
    if previous and not config.resume:
        raise EvalError(f"{traj_path} already holds a run; pass --resume to finish it, or choose another --out")
    done_keys: set[tuple[str, int]] = set()
    if previous:
        runs = [r for r in previous if r.get("type") == "run"]
        if runs:
            _check_resumable(traj_path, runs[0], header)
        done_keys = {(r["task_id"], r["sample"]) for r in previous if r.get("type") == "episode"}
    total = len(tasks) * config.samples
    jobs = [agentenv.rollout_job(t, s, task_mode(t, config.mode), episode_seed(config.seed, t.task_id, s))
            for t in tasks for s in range(config.samples) if (t.task_id, s) not in done_keys]
    writer = TrajectoryWriter(traj_path)
    writer.write([{**header, "resumed": True} if previous else header])
    progress = Progress(total, total - len(jobs), config.progress)
    work = agentenv.EpisodeWork(config.agent, backend=config.backend, reward_mode=config.reward_mode,
                                record_trajectory=True, reuse_agents=True, env_kwargs={"metrics": config.metrics})
    factory = agentenv.registry().executor(config.executor).factory
    scheduling = dict(retries=config.retries)
    scheduler_config = agentenv.SchedulerConfig(**scheduling) if config.lanes else agentenv.SchedulerConfig.fifo(**scheduling)
    started = time.monotonic()
    interrupted = False

    requests = {job.key: job.payload for job in jobs}

    def on_outcome(outcome: agentenv.EpisodeOutcome) -> None:
        if outcome.status == "cancelled":
            return  # stopped by Ctrl-C: no episode record, so --resume redoes it
        for number, earlier in enumerate(outcome.retried):  # kept for diagnosis; no episode record, not scored
            writer.write([{**r, "run_id": run_id, "sample": outcome.key[1], "attempt": number} for r in earlier.records])
        records, episode = _episode_records(outcome, requests[outcome.key], run_id)
        writer.write(records + [episode])
        with progress.lock:
            progress.done += 1
            if episode["cause"] == "infrastructure":
                progress.infra += 1
            elif not episode["success"]:
                progress.failed += 1
            if episode["cause"]:
                progress.causes[episode["cause"]] = progress.causes.get(episode["cause"], 0) + 1
            progress.retried += max(0, outcome.attempts - 1)
        progress.update()
        if on_progress:
            on_progress(progress)

    try:
        with factory(work, config.workers, config.address) as executor:
            config = dataclasses.replace(config, workers=executor.slots)  # results.json says how many ran
            scheduler = agentenv.Scheduler(executor, scheduler_config)
            try:
                scheduler.run(jobs, on_outcome=on_outcome)
            except KeyboardInterrupt:
                interrupted = True
                if config.progress:
                    sys.stderr.write("\n[eval] interrupted: the running episodes were stopped; rerun with --resume "
                                     "to complete the missing episodes\n")
    finally:
        progress.update(final=True)
        writer.close()
    records = read_jsonl(traj_path)
    results = summarize(records, tasks, config, complete=not interrupted, wall_time_s=time.monotonic() - started)
    tmp = results_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(tmp, results_path)
    return EvalOutcome(results, progress.done, interrupted, {"trajectories": traj_path, "results": results_path})


def _episode_records(outcome: agentenv.EpisodeOutcome, request: agentenv.RolloutRequest,
                     run_id: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The trajectory records of an outcome's last attempt, and its ``episode`` record."""
    task, sample = request.task, request.sample
    rollout = outcome.value if isinstance(outcome.value, agentenv.Rollout) else None
    result = rollout.episode if rollout is not None else None
    attempt = outcome.attempts - 1
    records = [{**r, "run_id": run_id, "sample": sample, "attempt": attempt} for r in (rollout.records if rollout else [])]
    if result is not None:
        cause, error, reward, score = result.cause, result.error, result.reward, result.score
        rounds, info, success = result.rounds, result.info, result.success
    else:
        cause = {"timeout": "timeout", "error": "agent_error"}.get(outcome.status, "infrastructure")
        error = outcome.error if cause != "timeout" else f"cut at its {outcome.phase} deadline"
        reward = score = 0.0
        rounds, info, success = 0, {}, False
    if outcome.status == "infrastructure":
        cause, success, reward, score = "infrastructure", False, 0.0, 0.0
        error = error or outcome.error
    episode = {"type": "episode", "schema": TRAJECTORY_SCHEMA, "run_id": run_id, "task_id": task.task_id,
               "env_id": task.env_id, "mode": request.mode, "sample": sample,
               "attempt": attempt, "seed": request.seed, "time": time.time(),
               "success": bool(success), "reward": float(reward), "score": float(score), "rounds": rounds,
               "wall_time_s": round(outcome.duration_s, 4), "cause": cause, "error": error,
               "reward_masked": cause == "infrastructure", "runtime": info.get("runtime") or {},
               "backend": info.get("backend"), "lane": outcome.lane, "predicted_s": round(outcome.predicted_s, 3)}
    return records, episode


# --------------------------------------------------------------------------- results

def _group_stats(episodes: list[dict[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    scored = [e for e in episodes if not e["reward_masked"]]
    failures = {cause: 0 for cause in CAUSES}
    for e in episodes:
        if e["cause"]:
            failures[e["cause"]] += 1
    return {"episodes": len(episodes), "scored": len(scored),
            "successes": sum(e["success"] for e in scored),
            "mean_reward": _mean(e["reward"] for e in scored),
            "mean_score": _mean(e["score"] for e in scored),
            "success_rate": _mean(float(e["success"]) for e in scored),
            "mean_rounds": _mean(e["rounds"] for e in scored),
            "mean_wall_time_s": _mean(e["wall_time_s"] for e in episodes),
            "failures": failures}


def summarize(records: list[dict[str, Any]], tasks: Sequence[TaskSpec], config: EvalConfig,
              complete: bool, wall_time_s: float) -> dict[str, Any]:
    """``results.json`` from the records of ``trajectories.jsonl`` (the last episode record of a
    (task, sample) wins)."""
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        if r.get("type") == "episode":
            latest[(r["task_id"], r["sample"])] = r
    runtimes: dict[str, dict[str, Any]] = {}
    backends: set[str] = set()
    per_task = []
    for task in tasks:
        episodes = [latest[(task.task_id, s)] for s in range(config.samples) if (task.task_id, s) in latest]
        stats = _group_stats(episodes, config.ks)
        n, c = stats["scored"], stats["successes"]
        for e in episodes:
            if e.get("runtime", {}).get("hash"):
                runtimes[e["runtime"]["hash"]] = e["runtime"]
            if e.get("backend"):
                backends.add(e["backend"])
        per_task.append({"task_id": task.task_id, "env_id": task.env_id, "version": task.version,
                         "mode": task_mode(task, config.mode), "tags": list(task.tags),
                         "difficulty": task.difficulty, **stats,
                         "pass_at_k": {str(k): pass_at_k(n, c, k) for k in config.ks},
                         "rewards": [e["reward"] for e in sorted(episodes, key=lambda e: e["sample"])
                                     if not e["reward_masked"]],
                         "runtime_hash": next((e["runtime"].get("hash") for e in episodes if e.get("runtime")), None)})
    all_episodes = [e for t in per_task for e in
                    (latest[(t["task_id"], s)] for s in range(config.samples) if (t["task_id"], s) in latest)]
    overall = _group_stats(all_episodes, config.ks)
    overall["tasks"] = len(per_task)
    overall["pass_at_k"] = {}
    for k in config.ks:
        values = [t["pass_at_k"][str(k)] for t in per_task]
        overall["pass_at_k"][str(k)] = None if any(v is None for v in values) else _mean(values)
    backend = config.backend if isinstance(config.backend, str) else config.backend.name
    return {"schema": RESULT_SCHEMA, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "agentenv_version": agentenv.__version__, "complete": complete and len(all_episodes) == len(per_task) * config.samples,
            "agent": {"spec": config.agent, "name": config.agent.partition(":")[0]},
            "suite": {"name": config.suite.name, "version": config.suite.version,
                      "description": config.suite.description, "tasks": len(per_task),
                      "task_filter": list(config.tasks)},
            "config": {"samples": config.samples, "k": list(config.ks), "workers": config.workers,
                       "executor": config.executor, "lanes": config.lanes,
                       "backend": backend, "backends_used": sorted(backends), "mode": config.mode,
                       "reward_mode": config.reward_mode, "retries": config.retries, "seed": config.seed},
            "wall_time_s": round(wall_time_s, 3),
            "overall": overall, "tasks": per_task, "runtimes": runtimes}
