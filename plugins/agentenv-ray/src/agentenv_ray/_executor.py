"""The Ray executor: the scheduler's attempts run on Ray actors, one per core of the cluster.

Each actor is one scheduler slot. It holds its own sandbox backend (a warm pool of sandboxes on
its node, so creation stays local) and its slot state (the env it reuses across episodes). It
runs each attempt in a thread and streams the attempt's phases back through a Ray generator, so
the scheduler enforces the same per-phase deadlines as with local threads; a cancellation is a
second, concurrent call on the actor that fires the attempt's cancel hooks (its sandboxes are
killed). A work that ignores its cancellation is abandoned by killing the actor process: its
sandboxes die with it (agentenv's sandboxes follow their owner's death), and Ray restarts it.

Faults: the actors restart on any node with a free core (``max_restarts=-1``) and never replay a
call (``max_task_retries=0``). An attempt whose worker process or node died is reported as
:class:`WorkerLost`, an infrastructure failure, which the scheduler retries; its result can only
arrive through the scheduler, which keeps one outcome per job, so no episode is lost or counted
twice.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import ray
import ray.exceptions

import agentenv
from agentenv import Attempt, AttemptContext, Executor, RolloutRequest

from ._shipping import (TaskFolder, cache_root, install_runtime, pack_runtime, pack_task_folder, runtime_dir_of,
                        unpack_task_folder)

log = logging.getLogger("agentenv.ray")


class WorkerLost(agentenv.InfrastructureError):
    """The Ray worker process (or its whole node) running an attempt died; the attempt is retried."""


class RemoteFailure(agentenv.AgentEnvError):
    """An exception raised on a Ray worker that could not travel back as itself (kept as text)."""

    def __init__(self, message: str, infrastructure: bool = False):
        super().__init__(message)
        self.infrastructure = infrastructure

    def __reduce__(self):
        return (RemoteFailure, (str(self), self.infrastructure))


@dataclass(frozen=True)
class ShippedRollout:
    """A :class:`agentenv.RolloutRequest` as it travels: the task's folder and runtime as object
    references (fetched by a node only when it does not have them yet), not as host paths."""

    task_digest: str
    task_folder: Any  # ObjectRef of a TaskFolder
    task_file: str
    runtime_name: str | None
    runtime: Any  # ObjectRef of a RuntimeArchive, or None
    mode: str
    sample: int
    seed: int


class EpisodeActor:
    """One slot of the cluster: runs attempts of *work* on its node (see the module docstring)."""

    def __init__(self, work: Callable, node_cache_root: str | None = None):
        self.node_id = ray.get_runtime_context().get_node_id()
        if node_cache_root:  # a cache per node, as separate disks would have (tests, shared file systems)
            os.environ["AGENTENV_CACHE"] = os.path.join(node_cache_root, self.node_id[:16])
            os.makedirs(os.environ["AGENTENV_CACHE"], exist_ok=True)
        self.work = work
        self.local: dict = {}
        self.contexts: dict[int, AttemptContext] = {}
        self.tasks: dict[tuple[str, str], Any] = {}
        self.lock = threading.Lock()

    def where(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "pid": os.getpid(), "cache": cache_root()}

    def run(self, attempt: Attempt, payload: Any):
        """A generator: ``("phase", name)`` as the attempt moves on, then ``("done", value, error)``."""
        events: queue.Queue = queue.Queue()

        def body() -> None:
            ctx = AttemptContext(attempt, lambda phase: events.put(("phase", phase)), self.local)
            with self.lock:
                self.contexts[attempt.id] = ctx
            value = error = None
            try:
                value = self.work(self._localize(payload), ctx)
            except BaseException as exc:  # reported, classified by the scheduler
                error = _portable(exc)
            finally:
                with self.lock:
                    self.contexts.pop(attempt.id, None)
            events.put(("done", value, error))

        threading.Thread(target=body, name=f"agentenv-attempt-{attempt.id}", daemon=True).start()
        while True:
            event = events.get()
            yield event
            if event[0] == "done":
                return

    def cancel(self, attempt_id: int) -> bool:
        with self.lock:
            ctx = self.contexts.get(attempt_id)
        if ctx is None:
            return False
        ctx.cancel()
        return True

    def close(self) -> None:
        AttemptContext.close_local(self.local)

    def _localize(self, payload: Any) -> Any:
        if not isinstance(payload, ShippedRollout):
            return payload
        folder = unpack_task_folder(payload.task_digest, lambda: ray.get(payload.task_folder))
        if payload.runtime_name:
            install_runtime(payload.runtime_name, lambda: ray.get(payload.runtime))
        key = (payload.task_digest, payload.task_file)
        task = self.tasks.get(key)
        if task is None:
            task = self.tasks[key] = agentenv.load_task(os.path.join(folder, payload.task_file))
        return RolloutRequest(task, payload.mode, payload.sample, payload.seed)


def _portable(exc: BaseException) -> BaseException:
    """*exc* if it survives pickling as itself, else a RemoteFailure that keeps its text and kind."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return RemoteFailure(f"{type(exc).__name__}: {exc}",
                             isinstance(exc, agentenv.InfrastructureError) or bool(getattr(exc, "infrastructure", False)))


class RayExecutor(Executor):
    """Scheduler slots on a Ray cluster: ``workers`` actors (default: one per CPU of the cluster,
    ``cpus_per_worker`` each), spread over the nodes. Connects with ``ray.init(address)`` unless
    Ray is already initialised in this process (then it uses that cluster and leaves it running).

    Payloads that are :class:`agentenv.RolloutRequest` travel as :class:`ShippedRollout`: their
    task folder and runtime are packed once here, put in the object store once, and fetched by a
    node only the first time it needs them (:meth:`prepare` does the packing up front)."""

    def __init__(self, work: Callable, address: str | None = None, workers: int | None = None,
                 cpus_per_worker: float = 1.0, node_cache_root: str | None = None,
                 ready_timeout_s: float = 300.0, init_kwargs: dict[str, Any] | None = None):
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            ray.init(address=address, **(init_kwargs or {"log_to_driver": False}))
        cpus = float(ray.cluster_resources().get("CPU", 0))
        count = workers or max(1, int(cpus // cpus_per_worker))
        if count * cpus_per_worker > cpus:
            log.warning("%d workers of %g CPU each ask for more than the cluster's %g CPUs; the rest wait",
                        count, cpus_per_worker, cpus)
        actor = ray.remote(EpisodeActor).options(
            num_cpus=cpus_per_worker, max_restarts=-1, max_task_retries=0, max_concurrency=4,
            scheduling_strategy="SPREAD")
        # Shipped once through the object store, not once per actor; the reference is kept for as
        # long as the executor lives, because a restarted actor reads its arguments again.
        self._work_ref = ray.put(work)
        self._actors = [actor.remote(self._work_ref, node_cache_root) for _ in range(count)]
        self.placement = ray.get([a.where.remote() for a in self._actors], timeout=ready_timeout_s)
        self._folders: dict[str, tuple[str, Any, str]] = {}
        self._runtimes: dict[tuple, tuple[str | None, Any]] = {}
        self._lock = threading.Lock()
        self._suspect: set[int] = set()  # slots whose actor died and may be restarting
        self._closed = False

    @property
    def slots(self) -> int:
        return len(self._actors)

    def nodes(self) -> dict[str, int]:
        """How many slots each node holds now (actors move when a node dies)."""
        counts: dict[str, int] = {}
        for where in ray.get([a.where.remote() for a in self._actors], timeout=300):
            counts[where["node_id"]] = counts.get(where["node_id"], 0) + 1
        return counts

    def actor(self, slot: int) -> Any:
        return self._actors[slot]

    # ------------------------------------------------------------------ shipping
    def prepare(self, tasks: Any) -> None:
        """Pack and put the folders and runtimes of *tasks* now (otherwise: at their first attempt)."""
        for task in tasks:
            self._ship_task(task)

    def _ship_task(self, task: Any) -> tuple[tuple[str, Any, str], tuple[str | None, Any]]:
        with self._lock:
            source = os.path.abspath(task.source)
            folder = self._folders.get(source)
            if folder is None:
                packed: TaskFolder = pack_task_folder(task)
                folder = self._folders[source] = (packed.digest, ray.put(packed), packed.task_file)
            key = (task.environment.runtime, tuple(sorted(task.environment.dependencies)),
                   tuple(sorted(task.environment.env.items())))
            runtime = self._runtimes.get(key)
            if runtime is None:
                env_dir = runtime_dir_of(task)
                if env_dir is None:
                    runtime = (None, None)
                else:
                    archive = pack_runtime(env_dir)
                    runtime = (archive.name, ray.put(archive))
                self._runtimes[key] = runtime
            return folder, runtime

    def _payload(self, payload: Any) -> Any:
        if not isinstance(payload, RolloutRequest):
            return payload
        (digest, folder_ref, task_file), (runtime_name, runtime_ref) = self._ship_task(payload.task)
        return ShippedRollout(digest, folder_ref, task_file, runtime_name, runtime_ref, payload.mode,
                              payload.sample, payload.seed)

    # ------------------------------------------------------------------ the executor interface
    def start(self, attempt: Attempt, events: Any) -> None:
        if self._closed:
            raise agentenv.SchedulerError("this RayExecutor is closed")
        payload = self._payload(attempt.job.payload)
        threading.Thread(target=self._pump, args=(attempt, events, payload), daemon=True,
                         name=f"agentenv-ray-pump-{attempt.id}").start()

    def _wait_until_alive(self, slot: int, budget_s: float) -> None:
        """A slot whose actor just died is restarting: wait for it (within the attempt's start
        budget) instead of failing the next attempt at once, which would spend its retries in
        milliseconds on the same restarting actor."""
        deadline = time.monotonic() + budget_s
        while True:
            try:
                ray.get(self._actors[slot].where.remote(), timeout=max(1.0, deadline - time.monotonic()))
                self._suspect.discard(slot)
                return
            except (ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.5)

    def _pump(self, attempt: Attempt, events: Any, payload: Any) -> None:
        try:
            if attempt.slot in self._suspect:
                self._wait_until_alive(attempt.slot, attempt.deadlines.start_s)
            stream = self._actors[attempt.slot].run.remote(attempt, payload)
            for ref in stream:
                event = ray.get(ref)
                if event[0] == "phase":
                    events.phase(attempt, event[1])
                else:
                    events.done(attempt, event[1], event[2])
                    return
            events.done(attempt, None, WorkerLost("the worker ended the attempt without a result"))
        except ray.exceptions.RayError as exc:  # the actor, its process or its node died
            self._suspect.add(attempt.slot)
            first_line = (str(exc).splitlines() or [""])[0][:300]
            events.done(attempt, None, WorkerLost(f"{type(exc).__name__}: {first_line}"))
        except BaseException as exc:  # never leave an attempt without an answer
            events.done(attempt, None, WorkerLost(f"{type(exc).__name__}: {exc}"))

    def cancel(self, attempt: Attempt) -> None:
        self._actors[attempt.slot].cancel.remote(attempt.id)

    def abandon(self, attempt: Attempt) -> None:
        log.warning("attempt %s ignored its cancellation: restarting the worker of slot %d", attempt.id, attempt.slot)
        self._suspect.add(attempt.slot)
        ray.kill(self._actors[attempt.slot], no_restart=False)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            ray.get([a.close.remote() for a in self._actors], timeout=60)
        except ray.exceptions.RayError:
            pass
        except Exception:
            log.exception("closing the Ray workers")
        for a in self._actors:
            ray.kill(a, no_restart=True)  # their sandboxes and zygotes die with them
        if self._owns_ray:
            ray.shutdown()


def make_executor(work: Callable, address: str | None = None, workers: int | None = None,
                  **kwargs: Any) -> RayExecutor:
    """What ``agentenv eval --executor ray [--address ADDR] [--workers N]`` builds."""
    return RayExecutor(work, address=address, workers=workers, **kwargs)
