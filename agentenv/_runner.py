"""Running one episode of an agent, and naming agents on the command line (``NAME[:ARG]``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._extension import Agent
from ._plugins import registry
from ._spec import TaskSpec


def make_agent(spec: str, task: TaskSpec, mode: str) -> Agent:
    """``reference``, ``noop``, ``replay:FILE``, ``command:CMD``...: the registered agent *NAME[:ARG]*."""
    name, _, arg = spec.partition(":")
    entry = registry().agent(name)
    return entry.factory(arg or None, task, mode)


@dataclass
class EpisodeResult:
    task_id: str
    mode: str
    reward: float  # the episode's return (sum of rewards)
    score: float  # the final composite score
    success: bool
    rounds: int
    terminated: bool
    truncated: bool
    reward_masked: bool
    infra_error: str | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def run_episode(env, agent: Agent, seed: int | None = None) -> EpisodeResult:
    """Reset *env*, let *agent* act until the episode ends, and sum up what happened."""
    core = env.unwrapped
    obs, info = env.reset(seed=seed)
    agent.reset(core.task, core.mode, seed)
    total, steps = 0.0, []
    terminated = truncated = bool(info.get("reward_masked"))
    while not (terminated or truncated):
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps.append({"action": action, "reward": reward, "output": obs["output"]})
    return EpisodeResult(core.task.task_id, core.mode, total, float(info.get("score", 0.0)), bool(info.get("success")),
                         len(steps), terminated, truncated, bool(info.get("reward_masked")), info.get("infra_error"),
                         steps, info)
