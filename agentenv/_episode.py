"""The one episode loop (``run_episode``), and naming agents on the command line (``NAME[:ARG]``).

``agentenv run``, ``agentenv eval`` and ``agentenv audit`` all play episodes through
:func:`run_episode`, on environments built the way RL users build them (``gym.make``), so a
behaviour of one is the behaviour of all. Failures are classified, never raised from the loop:

* ``infrastructure``: the machinery failed (``info["reward_masked"]``, or an
  :class:`InfrastructureError` from the environment or the agent): not scored, retry it;
* ``agent_error``: the agent raised anything else: the agent's failure, scored 0;
* ``unsolved`` / ``max_rounds``: the episode ended without success (``max_rounds``: truncated).

A ``stop`` event ends the loop between steps (Ctrl-C in a pool of workers): the result is None.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ._errors import InfrastructureError
from ._extension import Agent
from ._plugins import registry
from ._spec import AGENTIC, Mode, TaskSpec

#: why an episode did not succeed (None: it did); ``timeout``: a scheduler cut it at a phase deadline
CAUSES = ("infrastructure", "agent_error", "timeout", "unsolved", "max_rounds")


def make_agent(spec: str, task: TaskSpec, mode: Mode) -> Agent:
    """``reference``, ``noop``, ``replay:FILE``, ``command:CMD``...: the registered agent *NAME[:ARG]*."""
    name, _, arg = spec.partition(":")
    entry = registry().agent(name)
    return entry.factory(arg or None, task, mode)


@dataclass
class EpisodeResult:
    """What happened in one episode."""

    task_id: str
    mode: Mode
    reward: float  # the episode's return (sum of rewards)
    score: float  # the final composite score
    success: bool
    rounds: int
    terminated: bool
    truncated: bool
    reward_masked: bool
    infra_error: str | None
    #: one entry per step: the action, its reward and the observation's output
    steps: list[dict[str, Any]] = field(default_factory=list)
    #: the last step's info (or the reset's, when no step ran)
    info: dict[str, Any] = field(default_factory=dict)
    #: one of :data:`CAUSES`, or None for a success
    cause: str | None = None
    #: the agent's exception or the infrastructure failure, as text
    error: str | None = None
    wall_time_s: float = 0.0


class ScriptedAgent(Agent):
    """Plays a fixed list of actions (a code string single-shot), then submits (agentic)."""

    name = "scripted"

    def __init__(self, actions: Sequence[Any], submit: bool = True):
        self.actions, self.submit = list(actions), submit

    def reset(self, task: TaskSpec, mode: Mode, seed: int | None = None) -> None:
        self.queue = list(self.actions) + ([{"action": "submit"}] if self.submit and mode == AGENTIC else [])

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> Any:
        if not self.queue:
            raise _OutOfActions
        return self.queue.pop(0)


class _OutOfActions(Exception):
    """A scripted agent has nothing more to send: the episode ends where it is."""


def run_episode(env: Any, agent: Agent, seed: int | None = None, *, sample: int | None = None,
                stop: threading.Event | None = None) -> EpisodeResult | None:
    """Reset *env*, let *agent* act until the episode ends, and sum up what happened.

    *env* is any Gymnasium env whose ``unwrapped`` is a :class:`agentenv.CodingEnv` (what
    ``gym.make`` returns). *sample* is the episode's index among its task's samples (an
    evaluation's), given to the agent as :attr:`Agent.sample`. Returns None when *stop* was set
    before the episode ended."""
    core = env.unwrapped
    agent.sample = sample
    start = time.monotonic()
    total, steps, info = 0.0, [], {}
    terminated = truncated = False
    cause = error = None
    try:
        obs, info = env.reset(seed=seed)
        agent.reset(core.task, core.mode, seed)
        done = bool(info.get("reward_masked"))
        while not done:
            if stop is not None and stop.is_set():
                return None
            try:
                action = agent.act(obs, info)
            except InfrastructureError:
                raise
            except _OutOfActions:
                break
            except Exception as exc:  # whatever the agent raises is the agent's failure
                cause, error = "agent_error", f"{type(exc).__name__}: {exc}"
                break
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            steps.append({"action": action, "reward": reward, "output": obs["output"]})
            done = terminated or truncated
    except InfrastructureError as exc:
        cause, error = "infrastructure", f"{type(exc).__name__}: {exc}"
    masked = cause == "infrastructure" or bool(info.get("reward_masked"))
    if cause is None and masked:
        cause, error = "infrastructure", info.get("infra_error")
    success = cause is None and bool(info.get("success"))
    if cause is None and not success:
        cause = "max_rounds" if truncated else "unsolved"
    return EpisodeResult(core.task.task_id, core.mode, 0.0 if masked else total,
                         float(info.get("score", 0.0)) if cause not in ("infrastructure", "agent_error") else 0.0,
                         success, len(steps), terminated, truncated, masked,
                         info.get("infra_error") or (error if masked else None), steps, info, cause, error,
                         time.monotonic() - start)
