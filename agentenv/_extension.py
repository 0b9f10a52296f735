"""Base classes that plugins implement: runtimes, actions, report formats, metrics, reward models,
agents, and the objects each one is handed.

Every class here is public (``agentenv.<Name>``) and documented for plugin authors; the hooks that
register them are in :mod:`agentenv.hookspecs`.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal, Mapping, Sequence

import jsonschema

from ._errors import ActionError, PluginError, did_you_mean
from ._sandbox import ExecResult, RuntimeEnv, Sandbox
from ._spec import EnvironmentConfig, Mode, TaskSpec


# --------------------------------------------------------------------------- runtimes

class Runtime(abc.ABC):
    """Claims runtime names matching ``pattern`` and prepares their environment on the host.

    The environment calls ``prepare(config, cache_dir)`` once per (runtime, dependencies) and process;
    *cache_dir* is agentenv's cache (``$AGENTENV_CACHE`` or ``~/.cache/agentenv``), where a runtime
    keeps what it builds (content-addressed, so that concurrent processes share one build).
    """

    #: a regex (full match) for the runtime names this plugin serves, e.g. ``python3(\\.\\d+)?``
    pattern: ClassVar[str]
    #: example names, shown in errors and docs
    examples: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def prepare(self, config: "EnvironmentConfig", cache_dir: str) -> RuntimeEnv:
        """Resolve the interpreter and build (once, cached by content hash) the dependency
        environment. Raise :class:`agentenv.RuntimeBuildError` naming what was found."""

    def dependency_problem(self, requirement: str) -> str | None:
        """Why *requirement* (one entry of ``environment_config.dependencies``) can never be
        installed by this runtime (bad syntax, say), or None. Loading a task calls it, so a bad
        requirement is refused with its JSON pointer before anything is built."""
        return None

    def unavailable(self, name: str) -> str | None:
        """Why the runtime *name* cannot run on this host (its interpreter is missing, say), or
        None. ``agentenv validate`` warns with it; :meth:`prepare` fails for the same reason, so
        both must come from one check."""
        return None


# --------------------------------------------------------------------------- actions

@dataclass
class ActionContext:
    """What an action sees: the sandbox, the task, and the episode so far."""

    sandbox: Sandbox
    task: TaskSpec
    mode: Mode
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
    #: JSON Schema of the object's fields (``properties`` / ``required``), without ``action``. Once it
    #: names ``properties``, an action object with any other field is refused (unless the schema
    #: sets ``additionalProperties``); see :meth:`check_fields`
    fields_schema: ClassVar[Mapping[str, Any]] = {"type": "object"}
    #: other names accepted for fields (alias -> field), e.g. an old name kept working
    field_aliases: ClassVar[Mapping[str, str]] = {}

    @abc.abstractmethod
    def execute(self, ctx: ActionContext, action: Mapping[str, Any]) -> ActionOutcome:
        """Carry the action out in ``ctx.sandbox``. Raise :class:`agentenv.ActionError` for an
        action that cannot be done (the agent is told why)."""

    def check_fields(self, action: Mapping[str, Any]) -> None:
        """Refuse an action object that does not fit :attr:`fields_schema`, as :class:`ActionError`.

        The environment calls this before :meth:`execute`. When the schema names its
        ``properties`` (and does not set ``additionalProperties``), any other field is refused,
        with a did-you-mean; each declared field's ``type`` is checked, then the rest of the schema
        (jsonschema). Messages quote values shortened, whatever their size or nesting."""
        check_action_fields(self, action)

    def schema(self) -> dict[str, Any]:
        base = dict(self.fields_schema)
        props = {"action": {"const": self.name}, **base.get("properties", {})}
        return {**base, "type": "object", "properties": props,
                "required": ["action", *base.get("required", [])]}


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, Mapping),
}
_VALIDATORS: dict[type, Any] = {}


def describe_value(value: Any, limit: int = 60) -> str:
    """A short description of an untrusted value: never its whole text, never a recursive repr."""
    if isinstance(value, str):
        shown = repr(value[:limit])
        return shown if len(value) <= limit else f"{shown[:-1]}... ({len(value)} characters)"
    if isinstance(value, bool) or value is None:
        return json_type(value)
    if isinstance(value, int):
        return repr(value) if -10 ** 30 < value < 10 ** 30 else f"an integer of {value.bit_length()} bits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple, Mapping, bytes, bytearray)):
        return f"{json_type(value)} of length {len(value)}"
    return json_type(value)


def json_type(value: Any) -> str:
    """The JSON type name of *value* ("string", "number", ...), else its Python type's name."""
    if value is None:
        return "null"
    for name in ("boolean", "string", "array", "object"):
        if _JSON_TYPES[name](value):
            return name
    if _JSON_TYPES["number"](value):
        return "number"
    return type(value).__name__


def _expected(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(f"{'an' if t[0] in 'aeiou' else 'a'} {t}" for t in names)


def _constraint(error: Any) -> str:
    """What a jsonschema error asks for, in words, without quoting the (maybe huge) value."""
    kind, want = error.validator, error.validator_value
    words = {"minLength": "must not be empty" if want == 1 else f"must have at least {want} characters",
             "maxLength": f"must have at most {want} characters", "minimum": f"must be >= {want}",
             "exclusiveMinimum": f"must be > {want}", "maximum": f"must be <= {want}",
             "exclusiveMaximum": f"must be < {want}", "type": f"must be {_expected(want)}" if isinstance(want, (str, list)) else "",
             "const": f"must be {json.dumps(want, default=str)[:80]}", "minItems": f"must have at least {want} items",
             "maxItems": f"must have at most {want} items"}
    if kind == "enum" and isinstance(want, list):
        return "must be one of " + ", ".join(json.dumps(w, default=str)[:40] for w in want[:10])
    return words.get(kind) or f"does not fit the action's schema ({kind})"


def check_action_fields(kind: "ActionType", action: Mapping[str, Any]) -> None:
    """See :meth:`ActionType.check_fields`."""
    schema = kind.fields_schema
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else None
    aliases = kind.field_aliases
    closed = props is not None and "additionalProperties" not in schema
    known = sorted({*(props or ()), *aliases})
    fields: dict[str, Any] = {}
    for key, value in action.items():
        if key == "action":
            continue
        if not isinstance(key, str):
            raise ActionError(f"{kind.name}: field names are strings, not {describe_value(key)}")
        name = aliases.get(key, key)
        if closed and name not in props:
            hint = did_you_mean(key[:100], known) if len(key) <= 100 else ""
            raise ActionError(f"{kind.name} has no field {describe_value(key)}" + (f"; did you mean {hint}?" if hint else "")
                              + f" ({kind.name}'s fields: {', '.join(known) if known else 'none'})")
        sub = props.get(name) if props is not None else None
        types = sub.get("type") if isinstance(sub, Mapping) else None
        if isinstance(types, (str, list)) and not any(_JSON_TYPES.get(t, lambda v: True)(value) for t in
                                                       ([types] if isinstance(types, str) else types)):
            raise ActionError(f"{kind.name}: field {key!r} must be {_expected(types)}, not {describe_value(value)}")
        fields.setdefault(name, value)
        if key == name:
            fields[name] = value
    for name in schema.get("required", ()):
        if name not in fields:
            raise ActionError(f"{kind.name} needs the field {name!r} ({kind.name}'s fields: {', '.join(known)})")
    validators = _validators(kind)
    checks = [(name, value, validators[name]) for name, value in fields.items() if name in validators]
    checks.append((None, fields, validators[None]))
    for name, value, validator in checks:
        what = f"field {name!r}" if name is not None else "the action"
        try:
            error = min(validator.iter_errors(value), key=lambda e: (len(e.path), str(e.validator)), default=None)
        except (RecursionError, ValueError, MemoryError, OverflowError):  # too deep or too large to check
            raise ActionError(f"{kind.name}: {what} is too deeply nested or too large to check") from None
        if error is not None:
            if name is None and error.absolute_path:
                what = f"field {error.absolute_path[0]!r}"
            raise ActionError(f"{kind.name}: {what} {_constraint(error)}, not {describe_value(error.instance)}")


def _validators(kind: "ActionType") -> dict[str | None, Any]:
    """jsonschema validators of *kind*'s fields (by name) and of the whole object (None), cached."""
    schema = kind.fields_schema
    cached = _VALIDATORS.get(type(kind))
    if cached is not None and cached[0] is schema:
        return cached[1]
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise PluginError(f"action {kind.name!r} declares an invalid fields_schema: {exc.message}") from None
    props = schema.get("properties")
    validators: dict[str | None, Any] = {None: cls(schema)}
    if isinstance(props, Mapping):
        # (a field's schema that refers into the whole one is checked with the whole one only)
        validators.update({name: cls(sub) for name, sub in props.items()
                           if isinstance(sub, Mapping) and '"$ref"' not in json.dumps(sub, default=str)})
    _VALIDATORS[type(kind)] = (schema, validators)
    return validators


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


#: what a test outcome can be, in a :class:`TestReport`
OUTCOMES = ("passed", "failed", "error", "skipped")


@dataclass(frozen=True)
class TestReport:
    """What a report format read from one scored command.

    ``outcomes`` maps each test's id to one of :data:`OUTCOMES` (an xfail that failed counts as
    passed, an xpass as failed). A format without per-test outcomes (a reward file) gives ``score``
    instead, a number in [0, 1]. ``status`` says how far to trust it: ``"ok"``; ``"missing"`` (no
    report: a crash, a kill, a usage error); ``"incomplete"`` (cut short, e.g. by ``os._exit``, or
    lacking tests the task has); ``"tampered"`` (``integrity`` names what was found). Anything but
    ``"ok"`` scores 0.
    """

    __test__ = False  # not a pytest test class, despite the name

    format: str
    outcomes: Mapping[str, str] = field(default_factory=dict)
    #: the first failure: ``{"type", "message"}`` and, where known, ``"test"``
    error: Mapping[str, str] | None = None
    status: Literal["ok", "missing", "incomplete", "tampered"] = "ok"
    integrity: tuple[Mapping[str, str], ...] = ()
    score: float | None = None
    #: the tests whose "passed" is an expected failure (xfail); the scorer counts one only where a
    #: trusted collection finds the task's xfail marker on it (``collect_command(..., marker="xfail")``)
    xfailed: frozenset[str] = frozenset()
    #: the tests the run collected (and did not deselect), as a format that runs inside the test
    #: process can tell (the pytest judge): where no trusted collection lists the task's tests, the
    #: report must cover these
    collected: frozenset[str] = frozenset()

    @property
    def trusted(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class ScoringContext:
    """What a :class:`ReportFormat` is told when it instruments one scored command."""

    #: a fresh, unguessable token for this run (name report files and pipes with it)
    nonce: str
    #: the workspace root inside the sandbox
    root: str
    #: the task's own files (pristine workspace and hidden files): trusted, unlike the workspace
    task_files: Mapping[str, bytes]
    #: sandbox paths of the files whose content the task decides (protected and hidden)
    trusted_paths: Sequence[str]
    #: the sandbox can make the report path a named pipe (``Sandbox.capabilities`` has "pipes")
    pipes: bool
    runtime: RuntimeEnv
    #: the step's ``report`` object, when the task names a format explicitly (its options)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredCommand:
    """How a scored command runs: the command itself, and what must exist before it runs."""

    command: str
    #: the sandbox path the report is read from after the run (a named pipe where possible)
    report_path: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: sandbox path -> content, written (read-only) just before the run
    files: Mapping[str, bytes] = field(default_factory=dict)
    #: whatever :meth:`ReportFormat.parse` needs later (a key, say); never shown to the agent
    state: Any = field(default=None, repr=False)
    #: the report may be a named pipe (it is written once, by this run only)
    pipe: bool = False


class ReportFormat(abc.ABC):
    """Reads the verdict of a scored command: pytest's, JUnit XML, a reward file, ``go test -json``...

    For each ``run_command`` step of a task's evaluation the environment picks a format: the one the
    step names (``"report": {"format": NAME, ...options}``), else the first registered format whose
    :meth:`matches` accepts the command, else none (then only the command's exit status and
    measurements are metrics). The format instruments the command (:meth:`instrument`: where the
    report goes, which files and environment the run needs), then reads the report
    (:meth:`parse`) into a :class:`TestReport`. Nothing the command prints is trusted unless a
    format says so. A format may also list the tests a run must cover (:meth:`collect_command`);
    a report that lacks one of them scores 0.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: JSON Schema of the options a step's ``report`` object may carry (besides ``format``)
    options_schema: ClassVar[Mapping[str, Any]] = {"type": "object"}

    def matches(self, command: str) -> bool:
        """Whether this format reads *command*'s report when the step names no format."""
        return False

    @abc.abstractmethod
    def instrument(self, command: str, ctx: ScoringContext) -> ScoredCommand:
        """The command to run instead of *command*, with its report path, environment and files."""

    @abc.abstractmethod
    def parse(self, scored: ScoredCommand, result: ExecResult, report: bytes | None) -> TestReport:
        """Read *report* (the bytes at ``scored.report_path``, ``None`` if there were none). Never
        raise for a bad report: it is a :class:`TestReport` with a status other than ``"ok"``."""

    def collect_command(self, command: str, marker: str | None = None) -> str | None:
        """A command that lists, one per line, the tests *command* must report (None: no such list);
        with *marker*, only those of them that carry it."""
        return None

    def collected_tests(self, result: ExecResult) -> frozenset[str]:
        """The test ids in a :meth:`collect_command` run's output (empty: nothing to check)."""
        return frozenset()

    def deselect(self, command: str, tests: Sequence[str]) -> str | None:
        """*command* changed so that it skips *tests* (the audit quarantines flaky tests with it);
        None when this format cannot."""
        return None

    def mask_output(self, text: str) -> str:
        """The command's output as the agent sees it (e.g. with host timings masked)."""
        return text


@dataclass(frozen=True)
class RunContext:
    """One scored command, as metric providers see it."""

    command: str
    result: ExecResult
    #: what the command's report format read (None: no format reads this command)
    report: TestReport | None = None
    #: the files the agent changed or added (relative to the workspace root; protected and hidden
    #: files left out), as evaluated: for quality metrics of the solution
    files: Mapping[str, bytes] = field(default_factory=dict)


class MetricProvider(abc.ABC):
    """Computes a family of metrics from one run (one parse serves several metrics)."""

    metrics: ClassVar[tuple[MetricInfo, ...]]
    #: True: measured only where asked for (a costly analysis such as a linter), that is where a
    #: reward rule or gate of the task names one of :attr:`metrics`, where a rule names a reward
    #: model (which may read any metric), or where the environment was made with
    #: ``metrics="all"`` or a list naming one. False (the default): measured on every scored run.
    on_demand: ClassVar[bool] = False

    @abc.abstractmethod
    def measure(self, run: RunContext) -> Mapping[str, Any]:
        """Metric values for *run*; leave out what does not apply. Never raise for bad output:
        a crash or unparsable report is a value (e.g. a pass rate of 0)."""

    def prepare(self, files: Mapping[str, bytes]) -> None:
        """Optional: called with a scored run's ``RunContext.files`` just before its command
        starts, so that work which needs only the files (a linter) can overlap the command;
        ``measure`` follows with the same files. The default does nothing."""


# --------------------------------------------------------------------------- reward models

@dataclass(frozen=True)
class EpisodeView:
    """What a reward model may look at, after the episode's evaluation."""

    task: TaskSpec
    #: the solution as judged (relative path -> content as bytes), protected and hidden paths
    #: excluded: the workspace's files as the first scored command found them, never re-read after
    files: Mapping[str, bytes]
    #: the reference solution's files (relative path -> content as bytes, like ``files``; decode
    #: both the same way, e.g. ``.decode("utf-8", "replace")``)
    reference: Mapping[str, bytes]
    #: the metrics of each scored run, in order
    metrics: tuple[Mapping[str, Any], ...]


class RewardModel(abc.ABC):
    """A fuzzy scorer of an episode's final files (readability, similarity, a rubric judge...).

    A rule names it with ``{"reward_model": NAME, "weight": W, "options": {...}}``. ``score`` runs on
    the host, outside the sandbox, after the evaluation; raise :class:`agentenv.InfrastructureError`
    when the scorer itself is unavailable (the episode is then masked, not scored 0).
    """

    #: the name a rule gives to use this model (``{"reward_model": NAME, ...}``): unique among the
    #: installed plugins (a second registration is refused), listed in the task schema's enum
    name: ClassVar[str]
    #: one line for ``agentenv plugins`` and the docs
    description: ClassVar[str] = ""

    @abc.abstractmethod
    def score(self, episode: EpisodeView, options: Mapping[str, Any]) -> float:
        """A score in [0, 1]."""


# --------------------------------------------------------------------------- agents

class Agent(abc.ABC):
    """A policy: an observation in, an action out (a code string single-shot, an action object
    agentic)."""

    name: ClassVar[str] = "agent"
    #: the index of the coming episode among its task's samples in an evaluation (None elsewhere);
    #: set before :meth:`reset`. An agent that replays recorded episodes plays this one.
    sample: int | None = None

    def reset(self, task: TaskSpec, mode: Mode, seed: int | None = None) -> None:
        """Called at the start of each episode."""

    @abc.abstractmethod
    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> Any:
        """The next action."""


#: ``factory(argument, task, mode) -> Agent``: *argument* is what follows ``NAME:`` on the command line
AgentFactory = Callable[[str | None, TaskSpec, Mode], Agent]


@dataclass(frozen=True)
class Command:
    """An ``agentenv`` subcommand: ``configure(parser)`` adds its arguments (an
    ``argparse.ArgumentParser``), ``run(args)`` returns the exit status."""

    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any], int]


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent: its name, factory and one-line help."""

    name: str
    factory: AgentFactory
    help: str = ""
