"""agentenv-ray: agentenv episodes on a Ray cluster.

- :class:`RayExecutor` (``make_executor``): the scheduler's slots as Ray actors, one per core,
  each with its own warm sandbox pool; task folders and runtimes shipped once per node.
- :class:`ResultLog`: results keyed by (task, sample); a rerun skips what is done.
- :class:`RayVectorEnv`: a Gymnasium VectorEnv whose sub-environments live on actors spread over
  the nodes, and :class:`SB3VecEnv`, its stable-baselines3 adapter.
"""

from __future__ import annotations

import importlib
from typing import Any

# Names load on first use (PEP 562): ``import agentenv`` loads this package's plugin module on every
# command, and Ray (or stable-baselines3 and torch for SB3VecEnv) must not load with it.
_WHERE = {
    "EpisodeActor": "_executor", "RayExecutor": "_executor", "RemoteFailure": "_executor",
    "ShippedRollout": "_executor", "WorkerLost": "_executor", "make_executor": "_executor",
    "ResultLog": "_resume", "ResultLogError": "_resume", "outcome_record": "_resume",
    "ShippingError": "_shipping", "prepared_on": "_shipping",
    "RayVectorEnv": "_vector", "VectorEnvError": "_vector",
    "SB3VecEnv": "_sb3",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'agentenv_ray' has no attribute {name!r}")
