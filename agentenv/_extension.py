"""Base classes that plugins implement: runtimes, actions, metrics, reward models, agents."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Literal, Mapping

from ._sandbox import ExecResult, RuntimeEnv, Sandbox

if TYPE_CHECKING:
    from ._spec import EnvironmentConfig, TaskSpec


# --------------------------------------------------------------------------- runtimes

class Runtime(abc.ABC):
    """Claims runtime names matching ``pattern`` and prepares their environment on the host."""

    #: a regex (full match) for the runtime names this plugin serves, e.g. ``python3(\\.\\d+)?``
    pattern: ClassVar[str]
    #: example names, shown in errors and docs
    examples: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def prepare(self, config: "EnvironmentConfig", cache_dir: str) -> RuntimeEnv:
        """Resolve the interpreter and build (once, cached by content hash) the dependency
        environment. Raise :class:`agentenv.RuntimeBuildError` naming what was found."""


# --------------------------------------------------------------------------- actions

@dataclass
class ActionContext:
    """What an action sees: the sandbox, the task, and the episode so far."""

    sandbox: Sandbox
    task: "TaskSpec"
    mode: str
    round: int
    #: fill for ``<model_generated_code>`` placeholders (single-shot mode)
    code: str | None = None


@dataclass(frozen=True)
class ActionOutcome:
    """The result of one action: text for the observation, the command run (if any), flags."""

    observation: str
    result: ExecResult | None = None
    submit: bool = False
    ok: bool = True


class ActionType(abc.ABC):
    """One kind of action object, ``{"action": name, ...fields}``."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: JSON Schema of the object's fields (``properties`` / ``required``), without ``action``
    fields_schema: ClassVar[Mapping[str, Any]] = {"type": "object"}

    @abc.abstractmethod
    def execute(self, ctx: ActionContext, action: Mapping[str, Any]) -> ActionOutcome:
        """Carry the action out in ``ctx.sandbox``. Raise :class:`agentenv.ActionError` for an
        action that cannot be done (the agent is told why)."""

    def schema(self) -> dict[str, Any]:
        base = dict(self.fields_schema)
        props = {"action": {"const": self.name}, **base.get("properties", {})}
        return {**base, "type": "object", "properties": props,
                "required": ["action", *base.get("required", [])]}


# --------------------------------------------------------------------------- metrics

@dataclass(frozen=True)
class MetricInfo:
    name: str
    direction: Literal["higher", "lower"] = "higher"
    description: str = ""
    #: a measurement of the host (time, memory): varies between identical runs
    noisy: bool = False
    #: natural upper bound for higher-is-better metrics (e.g. 1.0 for a rate); None = needs threshold
    bound: float | None = None


@dataclass(frozen=True)
class RunContext:
    """One scored command: its result and the reports collected from the sandbox."""

    command: str
    result: ExecResult
    #: "judge" (the trusted pytest judge), "json" (pytest-json-report), "junit" (JUnit XML) or None;
    #: the collected report bytes, and the key that authenticates a judge report
    report_kind: str | None = None
    report: bytes | None = None
    report_key: bytes | None = None


class MetricProvider(abc.ABC):
    """Computes a family of metrics from one run (one parse serves several metrics)."""

    metrics: ClassVar[tuple[MetricInfo, ...]]

    @abc.abstractmethod
    def measure(self, run: RunContext) -> Mapping[str, Any]:
        """Metric values for *run*; leave out what does not apply. Never raise for bad output:
        a crash or unparsable report is a value (e.g. a pass rate of 0)."""


# --------------------------------------------------------------------------- reward models

@dataclass(frozen=True)
class EpisodeView:
    """What a reward model may look at, after the episode's evaluation."""

    task: "TaskSpec"
    files: Mapping[str, bytes]  # the final workspace (relative path -> content), protected paths excluded
    reference: Mapping[str, str]
    metrics: tuple[Mapping[str, Any], ...]  # per scored run


class RewardModel(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str] = ""

    @abc.abstractmethod
    def score(self, episode: EpisodeView, options: Mapping[str, Any]) -> float:
        """A score in [0, 1]."""


# --------------------------------------------------------------------------- agents

class Agent(abc.ABC):
    """A policy: an observation in, an action out (a code string single-shot, an action object
    agentic)."""

    name: ClassVar[str] = "agent"

    def reset(self, task: "TaskSpec", mode: str, seed: int | None = None) -> None:
        """Called at the start of each episode."""

    @abc.abstractmethod
    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> Any:
        """The next action."""


AgentFactory = Callable[[str | None, "TaskSpec", str], Agent]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any], int]


@dataclass(frozen=True)
class AgentEntry:
    name: str
    factory: Any
    help: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
