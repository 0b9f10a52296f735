"""Registers the environments with Gymnasium: ``agentenv/Task-v0`` (takes ``task=PATH``) and
``agentenv/<task_id>-v<version>`` for every task of every installed suite.

Gymnasium finds an id only if it was registered before ``gym.make``, so ``import agentenv``
registers every suite's tasks, which loads the plugins (suites come from them). When ``import
agentenv`` runs inside the import of a plugin's own package (``import my_plugin`` first), that one
plugin is loaded later, at the next use of the registry (``agentenv.register_envs()``, a
``CodingEnv``, a CLI command), and its suites' ids are registered then; every other id at once.
"""

from __future__ import annotations

import logging

import gymnasium as gym

from ._plugins import Registry, get_plugin_manager, on_registry, registry
from ._suites import read_suite, task_header

log = logging.getLogger("agentenv")
ENTRY_POINT = "agentenv._env:make_env"
GENERIC_ID = "agentenv/Task-v0"


def register_envs(reg: Registry | None = None) -> dict[str, str]:
    """Register every task of every installed suite with Gymnasium; returns env id -> task file.

    A plugin package that users may import before agentenv calls this at the end of its
    ``__init__``: its plugin, left pending while the package was being imported, loads then."""
    if reg is None:
        reg = get_plugin_manager(complete=True).registry
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


def register_on_import() -> None:
    """What ``import agentenv`` does: load the plugins and register every suite's tasks, now and
    whenever the registry is rebuilt."""
    if GENERIC_ID not in gym.registry:
        gym.register(id=GENERIC_ID, entry_point=ENTRY_POINT)
    on_registry(register_envs)
    registry()
