"""Task suites: a directory with ``suite.json`` naming its tasks (paths or globs)."""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field

from ._errors import TaskSpecError, UnknownNameError, Violation
from ._spec import TaskSpec, load_task


@dataclass(frozen=True)
class Suite:
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
        doc = json.load(open(file))
    except (OSError, ValueError) as exc:
        raise TaskSpecError(file, [Violation("", f"cannot read the suite file: {exc}", "a suite.json object")]) from exc
    problems = []
    for key in ("name", "version", "tasks"):
        if key not in doc:
            problems.append(Violation(f"/{key}", f"missing required field {key!r}", "a value"))
    if problems:
        raise TaskSpecError(file, problems)
    files: list[str] = []
    for pattern in doc["tasks"]:
        matched = sorted(glob.glob(os.path.join(base, pattern), recursive=True))
        files += [m for m in matched if m not in files]
    return Suite(doc["name"], str(doc["version"]), doc.get("description", ""), base, tuple(files))


def installed_suites() -> dict[str, Suite]:
    from ._plugins import registry

    out = {}
    for path in registry().suites:
        suite = read_suite(path)
        out[suite.name] = suite
    return out


def find_suite(name_or_path: str) -> Suite:
    if os.path.exists(name_or_path):
        return read_suite(name_or_path)
    suites = installed_suites()
    try:
        return suites[name_or_path]
    except KeyError:
        raise UnknownNameError("suite", name_or_path, suites) from None


def task_header(path: str) -> tuple[str, int] | None:
    """(task_id, version) read without validation, for cheap registration at import."""
    try:
        doc = json.load(open(path))
        return str(doc["task_id"]), int(doc.get("version", 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
