"""A result log keyed by (task, sample): a rerun of the same jobs skips what is already there.

The driver appends one JSON line per outcome, whole and flushed to disk before the next, so a run
killed at any point (the driver, a node, the whole cluster) loses at most the episodes that were
running. Cancelled outcomes (an interrupted or over-provisioned run) are not logged: they are
redone. A last line cut short by a kill is dropped when the log is opened again.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Hashable, Iterable

import agentenv


class ResultLogError(agentenv.AgentEnvError):
    """The result log cannot be used (damaged in the middle, or written by another kind of run)."""


def _key_json(key: Hashable) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _key_of(value: Any) -> Hashable:
    return tuple(value) if isinstance(value, list) else value


def outcome_record(outcome: agentenv.EpisodeOutcome) -> dict[str, Any]:
    """The outcome's scheduling facts plus, for an episode, what it scored (no timings in ``result``)."""
    record = outcome.to_json()
    summary = getattr(outcome.value, "summary", None)
    record["result"] = summary() if callable(summary) else None
    return record


class ResultLog:
    def __init__(self, path: str, to_record: Callable[[agentenv.EpisodeOutcome], dict] = outcome_record):
        self.path, self.to_record = path, to_record
        self.records: dict[Hashable, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if os.path.exists(path):
            self._load()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")

    def _load(self) -> None:
        with open(self.path, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):  # a line cut short by a kill: drop it
                f.truncate(data.rfind(b"\n") + 1)
                data = data[: data.rfind(b"\n") + 1]
        for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise ResultLogError(f"{self.path}:{number}: not a JSON line; the log is damaged "
                                     "(move it away to start over)") from None
            if "key" not in record:
                raise ResultLogError(f"{self.path}:{number}: a record without 'key'; this is not a result log")
            self.records[_key_of(record["key"])] = record

    def done(self, key: Hashable) -> bool:
        return key in self.records

    def pending(self, jobs: Iterable[agentenv.EpisodeJob]) -> list[agentenv.EpisodeJob]:
        return [job for job in jobs if job.key not in self.records]

    def append(self, outcome: agentenv.EpisodeOutcome) -> None:
        if outcome.status == "cancelled":
            return
        record = self.to_record(outcome)
        record["key"] = _key_json(outcome.key)
        with self._lock:
            if outcome.key in self.records:
                raise ResultLogError(f"{self.path}: a second result for {outcome.key!r}; a job ran twice")
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())
            self.records[outcome.key] = record

    def run(self, scheduler: agentenv.Scheduler, jobs: Iterable[agentenv.EpisodeJob],
            on_outcome: Callable[[agentenv.EpisodeOutcome], None] | None = None) -> agentenv.RunReport:
        """Run the jobs that have no result yet, logging each outcome as it comes."""

        def record(outcome: agentenv.EpisodeOutcome) -> None:
            self.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

        return scheduler.run(self.pending(jobs), on_outcome=record)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
