"""The bundled task suites (``tasks/`` in the repository, ``agentenv/_bundled/tasks`` in a wheel)."""

from __future__ import annotations

import os

from .. import hookimpl


def bundled_dir(kind: str) -> str:
    """``tasks`` or ``schemas``: the repository's folder when running from a checkout, else the wheel's copy."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    checkout = os.path.join(os.path.dirname(package), kind)
    if os.path.isdir(checkout) and os.path.exists(os.path.join(os.path.dirname(package), "pyproject.toml")):
        return checkout
    return os.path.join(package, "_bundled", kind)


@hookimpl
def agentenv_add_task_suites(registry) -> None:
    root = bundled_dir("tasks")
    if not os.path.isdir(root):
        return
    for name in sorted(os.listdir(root)):
        if os.path.exists(os.path.join(root, name, "suite.json")):
            registry.add_suite(os.path.join(root, name))
