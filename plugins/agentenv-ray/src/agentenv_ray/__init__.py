"""agentenv-ray: agentenv episodes on a Ray cluster.

- :class:`RayExecutor` (``make_executor``): the scheduler's slots as Ray actors, one per core,
  each with its own warm sandbox pool; task folders and runtimes shipped once per node.
- :class:`ResultLog`: results keyed by (task, sample); a rerun skips what is done.
- :class:`RayVectorEnv`: a Gymnasium VectorEnv whose sub-environments live on actors spread over
  the nodes, and :class:`SB3VecEnv`, its stable-baselines3 adapter.
"""

from __future__ import annotations

from typing import Any

from ._executor import EpisodeActor, RayExecutor, RemoteFailure, ShippedRollout, WorkerLost, make_executor
from ._resume import ResultLog, ResultLogError, outcome_record
from ._shipping import ShippingError, prepared_on
from ._vector import RayVectorEnv, VectorEnvError

__all__ = [
    "EpisodeActor",
    "RayExecutor",
    "RayVectorEnv",
    "RemoteFailure",
    "ResultLog",
    "ResultLogError",
    "SB3VecEnv",
    "ShippedRollout",
    "ShippingError",
    "VectorEnvError",
    "WorkerLost",
    "make_executor",
    "outcome_record",
    "prepared_on",
]


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":  # stable-baselines3 (and torch) load only when the adapter is used
        from ._sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module 'agentenv_ray' has no attribute {name!r}")
