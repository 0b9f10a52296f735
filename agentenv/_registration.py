"""Registers the environments with Gymnasium: ``agentenv/Task-v0`` (takes ``task=PATH``) and
``agentenv/<task_id>-v<version>`` for every task of every installed suite."""

from __future__ import annotations

import logging

import gymnasium as gym

from ._suites import installed_suites, task_header

log = logging.getLogger("agentenv")
ENTRY_POINT = "agentenv._env:CodingEnv"
GENERIC_ID = "agentenv/Task-v0"


def register_envs() -> dict[str, str]:
    """Register every known task; returns env id -> task file."""
    ids: dict[str, str] = {}
    if GENERIC_ID not in gym.registry:
        gym.register(id=GENERIC_ID, entry_point=ENTRY_POINT)
    for suite in installed_suites().values():
        for path in suite.task_files:
            header = task_header(path)
            if header is None:
                log.warning("suite %s: %s is not a readable task; skipped (agentenv validate %s)", suite.name, path, path)
                continue
            env_id = f"agentenv/{header[0]}-v{header[1]}"
            ids[env_id] = path
            if env_id not in gym.registry:
                gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"task": path})
    return ids
