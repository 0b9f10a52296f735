"""The built-in executor: ``local``, the scheduler's episodes on threads of this process."""

from __future__ import annotations

import os

import agentenv


def local_executor(work, workers: int | None = None, address: str | None = None) -> agentenv.Executor:
    """Threads in this process, each with its own environments (the sandboxes fork from the
    backend's zygote, never from this process). *address* has no meaning here."""
    if address:
        raise agentenv.EvalError(f"--address {address} names a cluster, and the local executor has none; "
                                 "use --executor ray --address ADDR")
    return agentenv.ThreadExecutor(work, workers or default_workers())


def default_workers() -> int:
    """One episode per core: pytest episodes are CPU-bound, and more workers than cores only queue."""
    return max(1, len(os.sched_getaffinity(0)))


@agentenv.hookimpl
def agentenv_add_executors(registry) -> None:
    registry.add_executor("local", local_executor, "threads in this process (default)")
