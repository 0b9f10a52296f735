"""Task suites: a directory with ``suite.json`` naming its tasks (paths or globs)."""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field

from ._errors import TaskSpecError, UnknownNameError, Violation
from ._plugins import registry
from ._schema import load_task
from ._spec import TaskSpec

#: what a suite file holds, for messages about a missing or bad one
SUITE_FILE_HELP = ('a suite is a folder with suite.json, {"name": "my-suite", "version": "1.0.0", "description": '
                   '"...", "tasks": ["*/task.json"]} (tasks: task files, paths or globs relative to the folder)')
#: folders of a task that hold its files, not task documents
TASK_DATA_DIRS = ("workspace", "hidden", "solution", "__pycache__")


@dataclass(frozen=True)
class Suite:
    """A named, versioned set of task files (``suite.json``: ``name``, ``version``, ``description``, ``tasks``)."""

    name: str
    version: str
    description: str
    path: str
    task_files: tuple[str, ...] = field(default=())

    def load(self) -> list[TaskSpec]:
        return [load_task(p, suite=self.name) for p in self.task_files]


def read_suite(path: str) -> Suite:
    """Read ``suite.json`` in *path* (a directory or the file itself)."""
    file = path if path.endswith(".json") else os.path.join(path, "suite.json")
    base = os.path.dirname(os.path.abspath(file))
    try:
        with open(file) as f:
            doc = json.load(f)
    except FileNotFoundError as exc:
        found = sorted(os.path.relpath(p, base) for p in glob.glob(os.path.join(base, "*", "task.json")))
        there = (f"; this folder has {len(found)} task file(s) ({', '.join(found[:3])}{', ...' if len(found) > 3 else ''}) "
                 "that a suite.json would name" if found else "")
        raise TaskSpecError(file, [Violation("", f"there is no suite.json: {SUITE_FILE_HELP}{there}",
                                             "a suite.json file")], "suite folder") from exc
    except (OSError, ValueError) as exc:
        raise TaskSpecError(file, [Violation("", f"cannot read the suite file: {exc}; {SUITE_FILE_HELP}",
                                             "a suite.json object")], "suite file") from exc
    problems = []
    for key in ("name", "version", "tasks"):
        if not isinstance(doc, dict) or key not in doc:
            problems.append(Violation(f"/{key}", f"missing required field {key!r}; {SUITE_FILE_HELP}", "a value"))
    if problems:
        raise TaskSpecError(file, problems, "suite file")
    files: list[str] = []
    for pattern in doc["tasks"]:
        matched = sorted(glob.glob(os.path.join(base, pattern), recursive=True))
        files += [m for m in matched if m not in files]
    return Suite(doc["name"], str(doc["version"]), doc.get("description", ""), base, tuple(files))


def installed_suites() -> dict[str, Suite]:
    """Every suite the installed plugins registered, by name."""
    out = {}
    for path in registry().suites:
        suite = read_suite(path)
        out[suite.name] = suite
    return out


def find_suite(name_or_path: str) -> Suite:
    """An installed suite by name, or the suite in a folder."""
    if os.path.exists(name_or_path):
        return read_suite(name_or_path)
    suites = installed_suites()
    try:
        return suites[name_or_path]
    except KeyError:
        raise UnknownNameError("suite", name_or_path, suites) from None


def task_files(paths: list[str] | tuple[str, ...]) -> list[str]:
    """The task documents named by *paths*: files as given, folders searched for ``*.json``
    (``suite.json`` and a task's own data folders left out)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in TASK_DATA_DIRS)
                for name in sorted(files):
                    if name.endswith(".json") and name != "suite.json":
                        out.append(os.path.join(root, name))
        else:
            out.append(path)
    return out


def task_header(path: str) -> tuple[str, int] | None:
    """(task_id, version) read without validation, for cheap registration at import."""
    try:
        with open(path) as f:
            doc = json.load(f)
        return str(doc["task_id"]), int(doc.get("version", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
