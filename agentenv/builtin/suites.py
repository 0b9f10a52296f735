"""The bundled task suites (``tasks/`` in the repository, ``agentenv/_bundled/tasks`` in a wheel)."""

from __future__ import annotations

import os

import agentenv


@agentenv.hookimpl
def agentenv_add_task_suites(registry) -> None:
    root = agentenv.bundled_dir("tasks")
    if not os.path.isdir(root):
        return
    for name in sorted(os.listdir(root)):
        if os.path.exists(os.path.join(root, name, "suite.json")):
            registry.add_suite(os.path.join(root, name))
