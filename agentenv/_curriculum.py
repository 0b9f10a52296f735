"""Difficulty from measured pass rates, curricula over it, and the group filter of dynamic sampling.

A task's difficulty for a policy is what that policy measurably does on it: ``agentenv calibrate``
plays each task N times and writes, per task, the pass rate with a Wilson 95% interval and a band
into the suite's ``calibration.json`` (one entry per agent). Trainers then

* sample tasks by band (:class:`Curriculum`), e.g. mostly ``medium`` with some ``hard``;
* drop groups whose rewards are all equal (:func:`filter_groups`): under group-relative advantages
  (GRPO, DAPO) such a group has zero advantage for every sample and contributes no gradient, only
  cost. DAPO's *dynamic sampling* over-samples and keeps drawing until a batch holds enough groups
  with signal (:func:`fill_batch`); the share dropped is reported, since a rising share means the
  curriculum has gone stale (everything solved, or nothing).

Bands by pass rate ``p`` (successes / samples): ``unsolved`` p = 0, ``hard`` p < 0.3, ``medium``
p < 0.7, ``easy`` p < 1, ``solved`` p = 1. The interval says how far to trust a band: 2 of 4 and 50
of 100 are both ``medium``, with intervals [0.15, 0.85] and [0.40, 0.60].
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

from ._errors import ToolError

DIFFICULTY_BANDS = ("unsolved", "hard", "medium", "easy", "solved")
CALIBRATION_FILE = "calibration.json"


def wilson_interval(successes: int, samples: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); (0, 1) without samples.

    Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0 or n successes,
    which is where small calibration runs usually land."""
    if samples <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= samples:
        raise ValueError(f"successes must lie in 0..{samples}, not {successes}")
    p = successes / samples
    denom = 1 + z * z / samples
    centre = (p + z * z / (2 * samples)) / denom
    half = z * math.sqrt(p * (1 - p) / samples + z * z / (4 * samples * samples)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends, not 1 - 1e-16
    high = 1.0 if successes == samples else min(1.0, centre + half)
    return low, high


def difficulty_band(successes: int, samples: int) -> str:
    """The band of a task solved *successes* times in *samples* (see the module docstring)."""
    if samples <= 0:
        raise ValueError("a band needs at least one sample")
    p = successes / samples
    if p == 0:
        return "unsolved"
    if p == 1:
        return "solved"
    return "hard" if p < 0.3 else "medium" if p < 0.7 else "easy"


@dataclass(frozen=True)
class TaskDifficulty:
    """One task's measured difficulty for one agent."""

    task_id: str
    samples: int
    successes: int
    mean_reward: float | None = None

    @property
    def pass_rate(self) -> float:
        return self.successes / self.samples if self.samples else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.samples)

    @property
    def band(self) -> str:
        return difficulty_band(self.successes, self.samples)

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        return {"samples": self.samples, "successes": self.successes, "pass_rate": round(self.pass_rate, 6),
                "ci95": [round(low, 6), round(high, 6)], "band": self.band,
                "mean_reward": None if self.mean_reward is None else round(self.mean_reward, 6)}


def read_calibration(path: str, agent: str | None = None) -> dict[str, TaskDifficulty]:
    """Task id -> difficulty from a suite's ``calibration.json`` (a folder holding one, or the file).

    With one calibrated agent *agent* may be left out; otherwise it names which one."""
    if os.path.isdir(path):
        path = os.path.join(path, CALIBRATION_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise ToolError(f"{path}: no calibration; make one with: agentenv calibrate SUITE --agent A --samples N") from None
    except ValueError as exc:
        raise ToolError(f"{path}: not JSON ({exc}); rerun agentenv calibrate") from None
    agents = doc.get("agents") if isinstance(doc, dict) else None
    if not isinstance(agents, dict) or not agents:
        raise ToolError(f"{path}: /agents: expected an object of calibrated agents; rerun agentenv calibrate")
    if agent is None:
        if len(agents) > 1:
            raise ToolError(f"{path}: /agents holds {', '.join(sorted(agents))}: name one with agent=")
        agent = next(iter(agents))
    if agent not in agents:
        raise ToolError(f"{path}: /agents/{agent}: not calibrated; calibrated: {', '.join(sorted(agents))}")
    return {tid: TaskDifficulty(tid, int(t["samples"]), int(t["successes"]), t.get("mean_reward"))
            for tid, t in agents[agent]["tasks"].items()}


class Curriculum:
    """Tasks grouped by band, sampled by band weights (seeded)."""

    def __init__(self, difficulties: Mapping[str, TaskDifficulty], seed: int | None = None):
        self.difficulties = dict(difficulties)
        self.rng = random.Random(seed)

    def by_band(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {band: [] for band in DIFFICULTY_BANDS}
        for tid in sorted(self.difficulties):
            out[self.difficulties[tid].band].append(tid)
        return out

    def tasks(self, bands: Iterable[str] = ("hard", "medium", "easy")) -> list[str]:
        """Task ids in *bands* (default: those with a learning signal for the calibrated policy)."""
        wanted = _check_bands(bands)
        return [tid for band, ids in self.by_band().items() if band in wanted for tid in ids]

    def sample(self, n: int, weights: Mapping[str, float] | None = None) -> list[str]:
        """*n* task ids: a band drawn by *weights* (default equal over hard, medium, easy), then a task
        of that band uniformly; bands without tasks are skipped."""
        weights = dict(weights or {"hard": 1.0, "medium": 1.0, "easy": 1.0})
        _check_bands(weights)
        groups = self.by_band()
        usable = [(b, w) for b, w in weights.items() if w > 0 and groups[b]]
        if not usable:
            raise ValueError(f"no task in the bands {sorted(weights)}; the calibration has "
                             + ", ".join(f"{b}: {len(ids)}" for b, ids in groups.items()))
        bands, ws = zip(*usable)
        return [self.rng.choice(groups[self.rng.choices(bands, ws)[0]]) for _ in range(n)]


def _check_bands(bands: Iterable[str]) -> set[str]:
    wanted = set(bands)
    unknown = wanted - set(DIFFICULTY_BANDS)
    if unknown:
        raise ValueError(f"unknown band(s) {sorted(unknown)}; bands are {', '.join(DIFFICULTY_BANDS)}")
    return wanted


@dataclass(frozen=True)
class GroupFilter:
    """The result of :func:`filter_groups`: what was kept, what was dropped, and the dropped share."""

    kept: tuple[Any, ...]
    dropped: tuple[Any, ...]

    @property
    def dropped_share(self) -> float:
        total = len(self.kept) + len(self.dropped)
        return len(self.dropped) / total if total else 0.0


def has_signal(rewards: Sequence[float], tolerance: float = 1e-9) -> bool:
    """Whether a group's rewards differ (so group-relative advantages are not all zero)."""
    values = [float(r) for r in rewards]
    if any(math.isnan(v) for v in values):
        raise ValueError("a reward is NaN")
    return len(values) > 1 and max(values) - min(values) > tolerance


def filter_groups(groups: Mapping[Hashable, Sequence[float]] | Sequence[Sequence[float]],
                  tolerance: float = 1e-9) -> GroupFilter:
    """Keep the groups whose rewards are not all equal; *groups* maps a key (a prompt, a task id) to
    its rewards, or is a list of reward lists (the keys are then the indexes)."""
    items = groups.items() if isinstance(groups, Mapping) else enumerate(groups)
    kept, dropped = [], []
    for key, rewards in items:
        (kept if has_signal(rewards, tolerance) else dropped).append(key)
    return GroupFilter(tuple(kept), tuple(dropped))


@dataclass(frozen=True)
class DynamicBatch:
    """A batch filled by :func:`fill_batch`: the kept groups, how many were drawn and dropped."""

    groups: tuple[tuple[Any, tuple[float, ...]], ...]  # (key, rewards) of the kept groups
    drawn: int
    dropped: int

    @property
    def dropped_share(self) -> float:
        return self.dropped / self.drawn if self.drawn else 0.0

    @property
    def full(self) -> bool:
        return bool(self.groups)


def fill_batch(draw: Callable[[], tuple[Any, Sequence[float]]], size: int, max_draws: int,
               tolerance: float = 1e-9) -> DynamicBatch:
    """DAPO's dynamic sampling: call *draw* (which plays one group and returns ``(key, rewards)``)
    until *size* groups with signal are kept or *max_draws* groups were drawn."""
    if size < 1 or max_draws < size:
        raise ValueError(f"need 1 <= size <= max_draws, got size={size}, max_draws={max_draws}")
    kept: list[tuple[Any, tuple[float, ...]]] = []
    drawn = dropped = 0
    while len(kept) < size and drawn < max_draws:
        key, rewards = draw()
        drawn += 1
        if has_signal(rewards, tolerance):
            kept.append((key, tuple(float(r) for r in rewards)))
        else:
            dropped += 1
    return DynamicBatch(tuple(kept), drawn, dropped)
