"""Reading trajectory streams back into episodes (what ``export`` and ``reverify`` start from).

Two kinds of file hold the same records (``schemas/trajectory.schema.json``): a stream written by
``CodingEnv(trajectory=...)`` (``reset`` and ``step`` records only), and an ``agentenv eval`` run
(or a ``RolloutPool(trajectory=...)`` stream) which also tags each record with ``run_id``,
``sample`` and ``attempt`` and closes each finished episode with an ``episode`` record. An attempt
lost to an infrastructure failure and retried has no ``episode`` record: it is not an episode of
the run, so it is left out. Streams from concurrent environments interleave line by line; records
are grouped by ``episode_id``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import agentenv

_ROUNDS = re.compile(r"You have (\d+) rounds")


@dataclass
class Episode:
    """One episode's records: its reset, its steps in order, and the ``episode`` record if any."""

    reset: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None

    @property
    def episode_id(self) -> str:
        return str(self.reset.get("episode_id", ""))

    @property
    def task_id(self) -> str:
        return str(self.reset.get("task_id", ""))

    @property
    def env_id(self) -> str:
        return str(self.reset.get("env_id", ""))

    @property
    def mode(self) -> str:
        return str(self.reset.get("mode", "single_shot"))

    @property
    def finished(self) -> bool:
        """The episode reached its end (terminated or truncated), or its reset was masked."""
        if self.reset.get("reward_masked"):
            return True
        return bool(self.steps) and bool(self.steps[-1].get("terminated") or self.steps[-1].get("truncated"))

    @property
    def reward(self) -> float:
        if self.summary is not None:
            return float(self.summary.get("reward", 0.0))
        return float(sum(float(s.get("reward", 0.0)) for s in self.steps))

    @property
    def masked(self) -> bool:
        if self.summary is not None:
            return bool(self.summary.get("reward_masked"))
        return bool(self.reset.get("reward_masked")) or any(s.get("reward_masked") for s in self.steps)

    @property
    def final(self) -> dict[str, Any]:
        """The last record that evaluated (its metrics, breakdown, score); the reset when none did."""
        for record in reversed(self.steps):
            if record.get("reward_breakdown") is not None:
                return record
        return self.steps[-1] if self.steps else self.reset

    def rounds(self, default: int) -> int:
        """The round budget the episode ran under (named in the environment's recorded prompt)."""
        match = _ROUNDS.search(str((self.reset.get("observation") or {}).get("prompt", "")))
        return int(match.group(1)) if match else default

    @property
    def seed(self) -> int | None:
        seed = (self.summary or {}).get("seed")
        return seed if isinstance(seed, int) else None


def trajectory_file(run: str) -> str:
    """The trajectory file of *run*: a file as it is, or ``DIR/trajectories.jsonl``."""
    if os.path.isdir(run):
        path = os.path.join(run, "trajectories.jsonl")
        if not os.path.isfile(path):
            raise agentenv.ToolError(f"{run}: a run directory holds trajectories.jsonl, and this one has none "
                               "(give an agentenv eval --out folder, or a JSONL file written by "
                               "CodingEnv(trajectory=...))")
        return path
    if not os.path.isfile(run):
        raise agentenv.ToolError(f"{run}: no such file or directory; give an agentenv eval --out folder or a "
                           "trajectory JSONL file")
    return run


def read_records(path: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file; a last line cut short by an interruption is skipped."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            if number - 1 == last:
                continue
            raise agentenv.ToolError(f"{path}:{number}: not a JSON line ({exc}); the file is damaged") from None
        if not isinstance(record, dict):
            raise agentenv.ToolError(f"{path}:{number}: a trajectory record is a JSON object, not {type(record).__name__}")
        yield record


def _tag(record: dict[str, Any]) -> tuple:
    return (record.get("run_id"), record.get("task_id"), record.get("sample"), record.get("attempt"))


def episodes(run: str) -> tuple[list[Episode], dict[str, int]]:
    """The episodes of *run* in file order, and counts of what was left out (and why)."""
    path = trajectory_file(run)
    open_by_id: dict[str, Episode] = {}
    order: list[Episode] = []
    by_tag: dict[tuple, Episode] = {}
    has_summaries = False
    skipped = {"unfinished": 0, "retried": 0, "orphan_steps": 0, "malformed": 0}
    for record in read_records(path):
        kind = record.get("type")
        if kind == "reset":
            episode = Episode(record)
            open_by_id[episode.episode_id] = episode
            order.append(episode)
            if record.get("run_id") is not None:
                by_tag[_tag(record)] = episode
        elif kind == "step":
            episode = open_by_id.get(str(record.get("episode_id", "")))
            if episode is None:
                skipped["orphan_steps"] += 1
                continue
            episode.steps.append(record)
        elif kind == "episode":
            has_summaries = True
            episode = open_by_id.get(str(record.get("episode_id", ""))) or by_tag.get(_tag(record))
            if episode is not None:
                episode.summary = record
    out = []
    for episode in order:
        if has_summaries and episode.summary is None and episode.reset.get("run_id") is not None:
            skipped["retried"] += 1  # an attempt that was played again, or an episode cut by Ctrl-C
            continue
        if episode.summary is None and not episode.finished:
            skipped["unfinished"] += 1
            continue
        if not _readable(episode):
            skipped["malformed"] += 1
            continue
        out.append(episode)
    return out, skipped


def _readable(episode: Episode) -> bool:
    """Whether an episode's records hold what rescoring reads: a reward that is a number, and scored
    runs that are a list of objects whose numbers a float holds (a trajectory file is anyone's, and a
    reward of "abc", scored runs of ints or a metric of 10**400 raised out of reverify: red team, stop 37)."""
    try:
        float(episode.reward)
        runs = episode.final.get("scored_runs") or []
        if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
            return False
        for run in runs:
            for value in run.values():
                if isinstance(value, int):
                    float(value)
        return True
    except (TypeError, ValueError, OverflowError, AttributeError):
        return False
