"""Registers the environments with Gymnasium: ``agentenv/Task-v0`` (takes ``task=PATH``) and
``agentenv/<task_id>-v<version>`` for every task of every installed suite.

Gymnasium finds an id only if it was registered before ``gym.make``, so ``import agentenv``
registers every suite's tasks, which loads the plugins (suites come from them). The one exception
keeps plugin authors free to ``import agentenv`` at the top of their package: when ``import
agentenv`` runs *inside* the import of a plugin's own package, loading that plugin now would
re-enter a half-imported module, so loading (and registration) waits for the first use of the
registry (``agentenv.registry()``, ``agentenv.register_envs()``, a ``CodingEnv``).
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys

import gymnasium as gym

from ._plugins import ENTRY_POINT_GROUP, Registry, loaded, on_registry, registry
from ._suites import read_suite, task_header

log = logging.getLogger("agentenv")
ENTRY_POINT = "agentenv._env:make_env"
GENERIC_ID = "agentenv/Task-v0"


def register_envs(reg: Registry | None = None) -> dict[str, str]:
    """Register every task of every installed suite with Gymnasium; returns env id -> task file."""
    reg = reg if reg is not None else registry()
    ids: dict[str, str] = {}
    if GENERIC_ID not in gym.registry:
        gym.register(id=GENERIC_ID, entry_point=ENTRY_POINT)
    for path in reg.suites:
        suite = read_suite(path)
        for file in suite.task_files:
            header = task_header(file)
            if header is None:
                log.warning("suite %s: %s is not a readable task; skipped (agentenv validate %s)", suite.name, file, file)
                continue
            env_id = f"agentenv/{header[0]}-v{header[1]}"
            ids[env_id] = file
            if env_id not in gym.registry:
                gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"task": file})
    return ids


def _inside_plugin_import() -> bool:
    """Whether ``import agentenv`` is running inside the import of an agentenv plugin's package."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        module = sys.modules.get(ep.value.split(":")[0].split(".")[0])
        if module is not None and getattr(getattr(module, "__spec__", None), "_initializing", False):
            return True
    return False


def register_on_import() -> None:
    """What ``import agentenv`` does: register ``agentenv/Task-v0`` now, and every suite's tasks
    as soon as the plugins are loaded (now, unless a plugin's package is being imported)."""
    if GENERIC_ID not in gym.registry:
        gym.register(id=GENERIC_ID, entry_point=ENTRY_POINT)
    on_registry(register_envs)
    if not loaded() and not _inside_plugin_import():
        registry()
