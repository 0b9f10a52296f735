"""The agentenv plugin: the ``ray`` executor (``agentenv eval --executor ray [--address ADDR]``)."""

from __future__ import annotations

import agentenv


def ray_executor(work, workers: int | None = None, address: str | None = None) -> agentenv.Executor:
    """One actor per core of a Ray cluster (at *address*, or a local one started for the run)."""
    from ._executor import make_executor  # Ray loads only when a run asks for it

    return make_executor(work, address=address, workers=workers)


@agentenv.hookimpl
def agentenv_add_executors(registry) -> None:
    registry.add_executor("ray", ray_executor, "Ray actors, one per core of the cluster (agentenv-ray)")
