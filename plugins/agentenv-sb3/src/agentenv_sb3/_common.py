"""What both wrappers share: resolving tasks, the per-process execution cache, small helpers."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from typing import Any, Iterable, Sequence

import agentenv
from agentenv import AgentEnvError, CodingEnv, TaskSpec


class TrainingError(AgentEnvError):
    """Bad input to a wrapper or to ``agentenv train`` (names what was given and the fix)."""


def resolve_tasks(tasks: Any = None, suite: str | None = None) -> list[TaskSpec]:
    """Tasks from a suite name/path, a task file, an env id, a TaskSpec, or a list of those."""
    if suite is not None:
        found = agentenv.find_suite(suite).load()
        if not found:
            raise TrainingError(f"suite {suite!r} has no tasks; check its suite.json 'tasks' globs")
        return found
    if tasks is None:
        raise TrainingError("give suite=NAME or tasks=[...] (task files, env ids or TaskSpec objects)")
    if isinstance(tasks, (str, os.PathLike, TaskSpec, CodingEnv)):
        tasks = [tasks]
    out = []
    for item in tasks:
        if isinstance(item, CodingEnv):
            out.append(item.task)
        elif isinstance(item, TaskSpec):
            out.append(item)
        elif isinstance(item, str) and item.startswith("agentenv/"):
            out.append(_task_for_env_id(item))
        elif isinstance(item, (str, os.PathLike)):
            out.append(agentenv.load_task(item))
        else:
            raise TrainingError(f"cannot make a task of {item!r}: give a task file, an env id or a TaskSpec")
    if not out:
        raise TrainingError("the task list is empty")
    return out


def _task_for_env_id(env_id: str) -> TaskSpec:
    import gymnasium as gym

    try:
        spec = gym.spec(env_id)
    except gym.error.Error as exc:
        raise TrainingError(f"unknown environment {env_id!r}: {exc}") from exc
    path = (spec.kwargs or {}).get("task")
    if not path:
        raise TrainingError(f"{env_id} is not a task environment of agentenv (no task= argument)")
    return agentenv.load_task(path)


def stable_bucket(text: str, buckets: int) -> int:
    """A bucket that is the same in every process (Python's ``hash`` is salted per process)."""
    return zlib.crc32(text.encode()) % buckets


def content_key(task: TaskSpec, files: dict[str, str]) -> str:
    """The cache key of a workspace state: the task's own file plus the changed files."""
    h = hashlib.sha256()
    h.update(task.task_id.encode() + b"\0" + os.path.abspath(task.source).encode() + b"\0")
    h.update(json.dumps(sorted(files.items())).encode())
    return h.hexdigest()


class ExecutionCache:
    """Per-process cache: workspace state (content hash) -> execution outcome.

    Sound only for tasks whose outcome is a function of the files (no timing rules, no
    randomness), which holds for the bundled training suites; it is an explicit option of each
    wrapper (``cache=False`` runs every state for real). Each SubprocVecEnv worker has its own.
    """

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Any:
        value = self.data.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value


CACHE = ExecutionCache()


def task_index(tasks: Sequence[TaskSpec]) -> dict[str, int]:
    return {t.task_id: i for i, t in enumerate(tasks)}


def pick(rng, items: Iterable[Any]) -> Any:
    items = list(items)
    return items[int(rng.integers(len(items)))]
