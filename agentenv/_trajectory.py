"""Trajectory records as JSON: one encoding for everything agentenv writes, and JSON-lines files.

Every record of an episode (``reset``, ``step``) and every file a tool writes (eval's
``trajectories.jsonl`` and ``results.json``, the audit's report) goes through :func:`jsonable`, so
the same value is written the same way everywhere: mappings with string keys, lists for tuples and
sets, numpy scalars as Python numbers, NaN and infinities as null (JSON has no such numbers), and
anything else as its ``repr``. Records validate against ``schemas/trajectory.schema.json``.
"""

from __future__ import annotations

import json
import math
from collections import abc
import os
import threading
from typing import Any, Mapping, Sequence

from ._errors import ToolError

TRAJECTORY_SCHEMA = "agentenv.trajectory/1"


MAX_DEPTH = 64
DEEPER = f"[nested more than {MAX_DEPTH} levels deep: left out]"


def jsonable(value: Any, depth: int = 0) -> Any:
    """*value* made of JSON types only (see the module docstring). A container nested more than
    :data:`MAX_DEPTH` levels deep is written as :data:`DEEPER`: a policy's tool call whose arguments
    nested 500 deep (``json.loads`` takes it) made recording it raise ``RecursionError`` out of
    ``env.step``, after the action had run (red team, stop 39)."""
    kind = type(value)  # the common exact types first: records are mostly these
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH and isinstance(value, (abc.Mapping, list, tuple, set, frozenset)):
        return DEEPER
    depth += 1
    if kind is dict:
        return {str(k): jsonable(v, depth) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [jsonable(v, depth) for v in value]
    if isinstance(value, abc.Mapping):
        return {str(k): jsonable(v, depth) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth) for v in value]
    if hasattr(value, "item") and type(value).__module__ == "numpy":  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every complete record of *path*; a last line cut short by an interruption is skipped.

    Raises :class:`agentenv.ToolError` naming the line when a line before the last is damaged."""
    records: list[dict[str, Any]] = []
    if not os.path.exists(path):
        return records
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number >= len(lines) - 1:
                continue
            raise ToolError(f"{os.fspath(path)}:{number}: not a JSON line; the file is damaged "
                            "(move it away to start over)") from None
    return records


class TrajectoryWriter:
    """Appends whole groups of records (one write, flushed) so a Ctrl-C never leaves half an episode."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.lock = threading.Lock()
        self._repair()
        self.file = open(self.path, "a", encoding="utf-8")

    def _repair(self) -> None:
        # A line cut short by a kill would glue onto the next append: drop it.
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return
        with open(self.path, "rb+") as f:
            data = f.read()
            if data.endswith(b"\n"):
                return
            f.truncate(data.rfind(b"\n") + 1)

    def write(self, records: Sequence[Mapping[str, Any]]) -> None:
        text = "".join(json.dumps(jsonable(r)) + "\n" for r in records)
        with self.lock:
            self.file.write(text)
            self.file.flush()
            os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "TrajectoryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
