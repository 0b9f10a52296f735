"""Base classes that plugins implement: runtimes, actions, metrics, reward models, agents."""

from __future__ import annotations

import abc
import json
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
    from ._errors import ActionError, did_you_mean

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
    import jsonschema

    from ._errors import PluginError

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
    #: the files of the evaluated workspace that the agent changed or added (path relative to the
    #: workspace root -> content; protected and hidden files excluded), for metrics of the code itself
    files: Mapping[str, bytes] = field(default_factory=dict)


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
