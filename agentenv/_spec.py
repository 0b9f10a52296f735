"""Task specifications: the JSON document, its schema, and the frozen dataclasses it loads into.

``load_task(path)`` validates a document against the schema assembled from the installed plugins
(``task_schema()``; ``agentenv schema`` prints it), then checks what a schema cannot say (files
that must exist, thresholds that lower-is-better metrics need), and reports *every* violation in
one :class:`TaskSpecError`, each with its JSON pointer, what was expected and what was found.

Task documents and task folders are untrusted input. Every path a document names is refused, by the
schema and again by the loader, unless it stays where it belongs: inline file keys are relative
paths strictly inside the workspace (no absolute path, ``..``, ``.`` or empty component, no NUL),
directories stay inside the task's folder, protected globs are relative without ``..``, the
workspace root and an sdist's pin name no parent directories. A task's directories are read without
following links out of its folder (:func:`agentenv._workspace.read_directory`). A document nested
deeper than :data:`MAX_DEPTH`, larger than :data:`MAX_TASK_BYTES`, or holding a number Python will
not convert, is a TaskSpecError naming the file, not a traceback.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import jsonschema

from ._errors import TaskSpecError, Violation, did_you_mean
from ._sandbox import DEFAULT_ROOT, Limits
from ._sources import SDIST_SCHEMA, VERSION_PATTERN, Sdist
from ._workspace import (NO_PARENT_PATTERN, SAFE_RELATIVE_PATTERN, SAFE_ROOT_PATTERN, path_problem, read_directory,
                         safe_suggestion)

PLACEHOLDER = "<model_generated_code>"
SCHEMA_ID = "https://agentenv.dev/schemas/task.schema.json"
DEFAULT_PROTECTED = ("tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                     "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
                     # a module in the workspace root shadows the test runner under `python -m pytest`
                     "pytest.py", "pytest/**", "_pytest/**", "pluggy.py", "pluggy/**", "py.py",
                     "pytest_jsonreport/**", "xdist/**")
AGGREGATIONS = ("max", "min", "mean", "last", "first")
TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*$"
#: deepest nesting of objects and arrays a task document may have (real ones have fewer than 10)
MAX_DEPTH = 64
#: largest task file load_task reads (the bundled ones are below 20 KiB)
MAX_TASK_BYTES = 64 * 1024 * 1024
FILESET_KEYS = ("workspace", "hidden_files", "reference_solution")


# --------------------------------------------------------------------------- dataclasses

@dataclass(frozen=True)
class EnvironmentConfig:
    runtime: str
    dependencies: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileSet:
    """Files given inline and/or as a directory next to the task file."""

    directory: str | None = None  # as written (relative to the task file)
    files: Mapping[str, str] = field(default_factory=dict)
    base_dir: str = field(default=".", compare=False)  # the task file's directory
    #: files of a pinned source distribution (agentenv._sources.Sdist), fetched and cached on first read
    sdist: Any = field(default=None, kw_only=True)
    #: the task file and the document's key of this section, for the errors of read()
    source: str = field(default="<memory>", compare=False, repr=False, kw_only=True)
    section: str = field(default="workspace", compare=False, repr=False, kw_only=True)

    @property
    def host_directory(self) -> str | None:
        return None if self.directory is None else os.path.normpath(os.path.join(self.base_dir, self.directory))

    def read(self) -> dict[str, bytes]:
        """Relative path -> content; inline files win over the directory's, which win over the sdist's.

        Raises :class:`TaskSpecError` (naming :attr:`source` and the pointer) for an inline path that
        is not strictly inside the workspace, a path that is both a file and a directory, and a
        directory entry :func:`agentenv._workspace.read_directory` refuses: the directory is read
        without following links out of the task folder (a link to a regular file inside the task
        folder is read as that file; every other link, and FIFOs and devices, are refused).
        """
        problems = [v for rel in self.files for v in _file_key_problems(self.section, rel)]
        if problems:
            raise TaskSpecError(self.source, problems)
        out: dict[str, bytes] = {}
        if self.sdist is not None:
            from ._sources import sdist_files

            out.update(sdist_files(self.sdist, source=self.source if self.source != "<memory>" else self.base_dir))
        if self.directory is not None:
            found, refused = read_directory(self.base_dir, self.directory)
            if refused:
                raise TaskSpecError(self.source,
                                    [_directory_violation(self.section, self.directory, m) for m in refused])
            out.update(found)
        for rel, text in self.files.items():
            out[rel] = text.encode()
        problems = list(_conflicts(self.section, out))
        if problems:
            raise TaskSpecError(self.source, problems)
        return out

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.sdist is not None:
            doc["sdist"] = self.sdist.to_json()
        if self.directory is not None:
            doc["directory"] = self.directory
        if self.files:
            doc["files"] = dict(self.files)
        return doc


@dataclass(frozen=True)
class Workspace(FileSet):
    root: str = DEFAULT_ROOT

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, **super().to_json()}


@dataclass(frozen=True)
class Gate:
    metric: str
    min: float | None = None
    max: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, **({"min": self.min} if self.min is not None else {}),
                **({"max": self.max} if self.max is not None else {})}


@dataclass(frozen=True)
class RewardRule:
    weight: float
    metric: str | None = None
    reward_model: str | None = None
    aggregation: str = "last"
    threshold: float | None = None
    scoring: str = "linear"  # "linear" | "step"
    gate: Gate | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.metric or f"model:{self.reward_model}"

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {}
        if self.metric is not None:
            doc["metric"] = self.metric
        if self.reward_model is not None:
            doc["reward_model"] = self.reward_model
        doc["weight"] = self.weight
        doc["aggregation"] = self.aggregation
        if self.threshold is not None:
            doc["threshold"] = self.threshold
        if self.scoring != "linear":
            doc["scoring"] = self.scoring
        if self.gate is not None:
            doc["gate"] = self.gate.to_json()
        if self.options:
            doc["options"] = dict(self.options)
        return doc


@dataclass(frozen=True)
class RewardLogic:
    rules: tuple[RewardRule, ...]
    type: str = "composite"
    success_threshold: float = 1.0

    def to_json(self) -> dict[str, Any]:
        doc = {"type": self.type, "rules": [r.to_json() for r in self.rules]}
        if self.success_threshold != 1.0:
            doc["success_threshold"] = self.success_threshold
        return doc


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    environment: EnvironmentConfig
    execution_steps: tuple[Mapping[str, Any], ...]
    reward: RewardLogic
    version: int = 0
    description: str = ""
    workspace: Workspace = Workspace()
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED
    hidden_files: FileSet | None = None
    limits: Limits = Limits()
    max_rounds: int = 20
    terminate_on_success: bool = False
    reference_solution: FileSet | None = None
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    expected_duration_s: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str = field(default="<memory>", compare=False)
    suite: str | None = field(default=None, compare=False)
    #: keys of the document as written (so ``to_json`` reproduces what was there, defaults too)
    written: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def env_id(self) -> str:
        return f"agentenv/{self.task_id}-v{self.version}"

    @property
    def root(self) -> str:
        return self.workspace.root

    def relpath(self, path: str) -> str:
        """*path* relative to the workspace root (accepts absolute sandbox paths)."""
        root = self.root.rstrip("/") + "/"
        return path[len(root):] if path.startswith(root) else path.lstrip("/") if path.startswith("/") else path

    @property
    def supports_single_shot(self) -> bool:
        """Whether some execution step takes the model's code (holds the placeholder)."""
        return any(PLACEHOLDER in json.dumps(step) for step in self.execution_steps)

    @property
    def single_shot_path(self) -> str | None:
        """The file the single-shot action replaces: the first step that writes the placeholder."""
        for step in self.execution_steps:
            if step.get("action") == "overwrite_file" and PLACEHOLDER in str(step.get("content", "")):
                return self.relpath(step["path"])
        return None

    def reference_files(self) -> dict[str, str]:
        if self.reference_solution is None:
            return {}
        return {k: v.decode("utf-8", "replace") for k, v in self.reference_solution.read().items()}

    def reference_code(self) -> str | None:
        """The single-shot action that the reference solution corresponds to."""
        path = self.single_shot_path
        return self.reference_files().get(path) if path else None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"task_id": self.task_id}
        optional: dict[str, Any] = {
            "version": self.version,
            "description": self.description,
        }
        env: dict[str, Any] = {"runtime": self.environment.runtime,
                               "dependencies": list(self.environment.dependencies)}
        if self.environment.env:
            env["env"] = dict(self.environment.env)
        rest: dict[str, Any] = {
            "workspace": self.workspace.to_json(),
            "protected_paths": list(self.protected_paths),
            "hidden_files": self.hidden_files.to_json() if self.hidden_files else None,
            "limits": _limits_json(self.limits),
            "max_rounds": self.max_rounds,
            "terminate_on_success": self.terminate_on_success,
            "reference_solution": self.reference_solution.to_json() if self.reference_solution else None,
            "tags": list(self.tags),
            "difficulty": self.difficulty,
            "expected_duration_s": self.expected_duration_s,
            "metadata": dict(self.metadata),
        }
        for key, value in optional.items():
            if key in self.written:
                doc[key] = value
        doc["environment_config"] = env
        doc["execution_steps"] = [dict(s) for s in self.execution_steps]
        doc["reward_logic"] = self.reward.to_json()
        for key, value in rest.items():
            if key in self.written and value is not None:
                doc[key] = value
        return doc


def _limits_json(limits: Limits) -> dict[str, Any]:
    return {k: v for k, v in limits.to_json().items() if v is not None}


# --------------------------------------------------------------------------- schema

def _fileset_schema(with_root: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {
        "directory": {"type": "string", "minLength": 1, "pattern": NO_PARENT_PATTERN,
                      "description": "a directory inside the task's folder, relative to the task file, whose "
                                     "files are copied (links out of the task folder are refused)"},
        "files": {"type": "object", "additionalProperties": {"type": "string"},
                  "propertyNames": {"pattern": SAFE_RELATIVE_PATTERN, "maxLength": 4000},
                  "description": "relative path (no leading '/', no '..', '.' or empty components) -> file content"},
        "sdist": SDIST_SCHEMA,
    }
    if with_root:
        props["root"] = {"type": "string", "pattern": SAFE_ROOT_PATTERN, "default": DEFAULT_ROOT,
                         "description": "absolute path of the workspace inside the sandbox (no '..', '.' or "
                                        "empty components)"}
    return {"type": "object", "additionalProperties": False, "properties": props}


def task_schema(registry: Any | None = None) -> dict[str, Any]:
    """The task JSON Schema, assembled from the installed plugins' actions, metrics and runtimes."""
    if registry is None:
        from ._plugins import registry as current

        registry = current()
    actions = sorted(registry.actions)
    metrics = sorted(registry.metrics)
    models = sorted(registry.reward_models)
    patterns = sorted({r.pattern for r in registry.runtimes})
    action_item: dict[str, Any] = {
        "type": "object",
        "required": ["action"],
        "properties": {"action": {"enum": actions}},
        "allOf": [{"if": {"properties": {"action": {"const": name}}, "required": ["action"]},
                   "then": registry.actions[name].schema()} for name in actions],
    }
    gate = {"type": "object", "additionalProperties": False, "required": ["metric"],
            "properties": {"metric": {"enum": metrics}, "min": {"type": "number"}, "max": {"type": "number"}}}
    rule = {
        "type": "object", "additionalProperties": False, "required": ["weight"],
        "properties": {
            "metric": {"enum": metrics},
            "reward_model": {"enum": models} if models else {"type": "string"},
            "weight": {"type": "number", "minimum": 0},
            "aggregation": {"enum": list(AGGREGATIONS), "default": "last"},
            "threshold": {"type": "number", "exclusiveMinimum": 0},
            "scoring": {"enum": ["linear", "step"], "default": "linear"},
            "gate": gate,
            "options": {"type": "object"},
        },
        "oneOf": [{"required": ["metric"], "not": {"required": ["reward_model"]}},
                  {"required": ["reward_model"], "not": {"required": ["metric"]}}],
    }
    limits_props = {
        "wall_time_s": {"type": "number", "exclusiveMinimum": 0},
        "memory_mb": {"type": "integer", "minimum": 16},
        "max_processes": {"type": "integer", "minimum": 1},
        "max_output_bytes": {"type": "integer", "minimum": 1024},
        "max_file_size_mb": {"type": "integer", "minimum": 1},
        "cpu_time_s": {"type": "number", "exclusiveMinimum": 0},
        "network": {"type": "boolean"},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "agentenv task",
        "type": "object",
        "required": ["task_id", "environment_config", "execution_steps", "reward_logic"],
        "additionalProperties": False,
        "properties": {
            "task_id": {"type": "string", "pattern": TASK_ID_PATTERN, "maxLength": 120},
            "version": {"type": "integer", "minimum": 0, "default": 0},
            "description": {"type": "string", "description": "the prompt shown to the agent"},
            "environment_config": {
                "type": "object", "additionalProperties": False, "required": ["runtime"],
                "properties": {
                    "runtime": {"type": "string", "pattern": "^(?:" + "|".join(f"(?:{p})" for p in patterns) + ")$"},
                    "dependencies": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            },
            "workspace": _fileset_schema(with_root=True),
            "protected_paths": {"type": "array", "items": {"type": "string", "minLength": 1,
                                                           "pattern": NO_PARENT_PATTERN},
                                "description": "globs (relative to the root) the agent may read but whose "
                                               "original content is restored before every scored evaluation"},
            "hidden_files": _fileset_schema(),
            "execution_steps": {"type": "array", "minItems": 1, "items": action_item},
            "reward_logic": {
                "type": "object", "additionalProperties": False, "required": ["type", "rules"],
                "properties": {
                    "type": {"const": "composite"},
                    "rules": {"type": "array", "minItems": 1, "items": rule},
                    "success_threshold": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
            "limits": {"type": "object", "additionalProperties": False, "properties": limits_props},
            "max_rounds": {"type": "integer", "minimum": 1, "maximum": 100000},
            "terminate_on_success": {"type": "boolean"},
            "reference_solution": _fileset_schema(),
            "tags": {"type": "array", "items": {"type": "string"}},
            "difficulty": {"enum": ["easy", "medium", "hard"]},
            "expected_duration_s": {"type": "number", "exclusiveMinimum": 0},
            "metadata": {"type": "object"},
        },
    }


# --------------------------------------------------------------------------- loading

def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _violations(doc: Any, schema: dict[str, Any], registry: Any) -> Iterator[Violation]:
    validator = jsonschema.Draft202012Validator(schema)
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        yield from _explain(err, registry)


def _explain(err: jsonschema.ValidationError, registry: Any) -> Iterator[Violation]:
    pointer = _pointer(err.absolute_path)
    kind = err.validator
    schema_path = list(err.absolute_schema_path)
    if len(schema_path) >= 2 and schema_path[-2] == "propertyNames":  # a bad key: point at it, not its object
        parts = list(err.absolute_path)
        if kind in ("pattern", "maxLength") and parts[-1:] == ["files"] and isinstance(err.instance, str):
            yield from _file_key_problems(str(parts[0]), err.instance, schema_says=True)
            return
        pointer = _pointer([*parts, err.instance])
    if kind == "pattern" and err.validator_value in (NO_PARENT_PATTERN, SAFE_ROOT_PATTERN, SAFE_RELATIVE_PATTERN,
                                                     VERSION_PATTERN):
        yield _path_violation(list(err.absolute_path), err.instance)
        return
    if kind == "enum" or (kind == "pattern" and pointer.endswith("/runtime")):
        field_name = str(err.absolute_path[-1]) if err.absolute_path else ""
        known = {"action": sorted(registry.actions), "metric": sorted(registry.metrics),
                 "reward_model": sorted(registry.reward_models),
                 "runtime": registry.runtime_examples()}.get(field_name, list(err.validator_value)
                                                          if kind == "enum" else [])
        what = field_name.replace("_", " ") or "value"
        msg = f"unknown {what} {err.instance!r}"
        hint = did_you_mean(str(err.instance), known)
        if hint:
            msg += f"; did you mean {hint}?"
        yield Violation(pointer, msg, "one of " + ", ".join(map(str, known)) if known else "", err.instance)
    elif kind == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed] if isinstance(err.instance, dict) else []
        for key in extra:
            hint = did_you_mean(key, allowed)
            msg = f"unknown field {key!r}" + (f"; did you mean {hint}?" if hint else "")
            yield Violation(f"{pointer}/{key}", msg, "one of " + ", ".join(allowed), key)
    elif kind == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        name = missing[0] if missing else err.message
        yield Violation(f"{pointer}/{name}", f"missing required field {name!r}", "a value", None)
    elif kind == "type":
        yield Violation(pointer, "wrong type", str(err.validator_value), err.instance)
    elif kind == "oneOf" and pointer.split("/")[-2:-1] == ["rules"]:
        yield Violation(pointer, "a rule names exactly one of 'metric' or 'reward_model'",
                        "'metric' xor 'reward_model'", sorted(err.instance) if isinstance(err.instance, dict) else err.instance)
    else:
        yield Violation(pointer, err.message, str(err.validator_value)[:120] if kind not in ("allOf", "oneOf") else "",
                        err.instance if not isinstance(err.instance, (dict, list)) else None)


_FILE_KEY_EXPECTED = "a path relative to the {where} root, without a leading '/', '..', '.' or empty components"


def _file_key_problems(section: str, rel: Any, schema_says: bool = False) -> Iterator[Violation]:
    """The violation of an inline file key that would not land strictly inside its directory."""
    problem = path_problem(rel)
    if problem is None and not schema_says:
        return
    where = "workspace" if section == "workspace" else f"workspace ({section.replace('_', ' ')})"
    fix = safe_suggestion(rel, DEFAULT_ROOT) if isinstance(rel, str) else ""
    expected = _FILE_KEY_EXPECTED.format(where="workspace") + (f", e.g. {fix!r}" if fix else "")
    msg = (f"file path {rel!r} is refused: {problem or 'it could name a file outside the workspace'}; inline files "
           f"are written below the {where} root, so their paths must stay inside it")
    if fix:
        msg += f": write {fix!r}"
    yield Violation(_pointer([section, "files", rel]), msg, expected, rel)


def _path_violation(parts: list[Any], value: Any) -> Violation:
    """A schema path-pattern failure, explained (which paths may be named, and how to fix it)."""
    pointer = _pointer(parts)
    name = str(parts[-1]) if parts else ""
    if parts[:1] == ["protected_paths"]:
        return Violation(pointer, f"protected glob {value!r} is refused: globs are relative to the workspace root, "
                                  "without a leading '/' or a '..' component (or a NUL byte)",
                         "a relative glob such as 'tests/**'", value)
    if name == "directory":
        return Violation(pointer, f"directory {value!r} is refused: a task's directories lie inside its folder; "
                                  "name one relative to the task file, without a leading '/' or a '..' component "
                                  "(copy the files into the task folder)",
                         "a directory inside the task folder, e.g. 'workspace'", value)
    if name == "root":
        return Violation(pointer, f"workspace root {value!r} is refused: it is an absolute sandbox path without "
                                  "'..', '.' or empty components", f"an absolute path such as {DEFAULT_ROOT!r}", value)
    if name == "version":
        return Violation(pointer, f"version {value!r} is refused: a version names a release (and a cache "
                                  "directory), so it has no '/'", "a version such as '1.2.3'", value)
    if name == "strip":
        fix = safe_suggestion(value) if isinstance(value, str) else ""
        return Violation(pointer, f"strip {value!r} is refused: it names a directory inside the archive, relative, "
                                  "without '..', '.' or empty components",
                         f"a top directory such as {fix or 'NAME-VERSION'!r}", value)
    return Violation(pointer, f"path {value!r} is refused", "a path without '..'", value)


def _directory_violation(section: str, directory: str, message: str) -> Violation:
    return Violation(f"/{section}/directory", message, "regular files and directories inside the task folder",
                     directory)


def _conflicts(section: str, files: Mapping[str, Any]) -> Iterator[Violation]:
    for rel in files:
        parent = rel.rpartition("/")[0]
        while parent:
            if parent in files:
                yield Violation(_pointer([section, "files", rel]), f"{parent!r} is both a file and the directory of "
                                f"{rel!r}", "distinct file and directory names", rel)
                break
            parent = parent.rpartition("/")[0]


def _outside(base_dir: str, directory: str) -> bool:
    """Whether *directory* (relative to *base_dir*) resolves, links followed, outside the task folder."""
    if os.path.isabs(directory):
        return True
    base = os.path.realpath(base_dir)
    full = os.path.realpath(os.path.join(base_dir, directory))
    return full != base and not full.startswith(base.rstrip(os.sep) + os.sep)


def _path_problems(doc: dict[str, Any], base_dir: str) -> Iterator[Violation]:
    """The loader's own check of every path the document names (the schema says the same in patterns)."""
    for key in FILESET_KEYS:
        section = doc.get(key) or {}
        for rel in section.get("files", {}):
            yield from _file_key_problems(key, rel)
        yield from _conflicts(key, section.get("files", {}))
        directory = section.get("directory")
        if directory is not None:
            norm = os.path.normpath(directory)
            if "\0" in directory or os.path.isabs(directory) or norm == ".." or norm.startswith(".." + os.sep):
                yield _path_violation([key, "directory"], directory)
            elif not os.path.isdir(os.path.join(base_dir, directory)):
                yield Violation(f"/{key}/directory", "directory does not exist (paths are relative to the task file)",
                                "an existing directory", os.path.join(base_dir, directory))
            else:
                _, refused = read_directory(base_dir, directory, contents=False)
                if not refused and _outside(base_dir, directory):
                    refused = [f"{directory} resolves outside the task folder"]
                for message in refused:
                    yield _directory_violation(key, directory, message)
        sdist = section.get("sdist") or {}
        if "strip" in sdist and path_problem(sdist["strip"]):
            yield _path_violation([key, "sdist", "strip"], sdist["strip"])
        if "/" in str(sdist.get("version", "")) or "\0" in str(sdist.get("version", "")):
            yield _path_violation([key, "sdist", "version"], sdist["version"])
    for i, glob in enumerate(doc.get("protected_paths", ())):
        if glob.startswith("/") or "\0" in glob or ".." in glob.split("/"):
            yield _path_violation(["protected_paths", i], glob)
    root = (doc.get("workspace") or {}).get("root", DEFAULT_ROOT)
    if not root.startswith("/") or path_problem(root.strip("/")):
        yield _path_violation(["workspace", "root"], root)


def _too_deep(doc: Any) -> Violation | None:
    """The first value nested deeper than MAX_DEPTH, found without recursion."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(doc, 0, ())]
    while stack:
        value, depth, parts = stack.pop()
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if depth >= MAX_DEPTH:
            return Violation(_pointer(parts[:8]) + ("/..." if len(parts) > 8 else ""),
                             f"the document nests deeper than {MAX_DEPTH} levels of objects and arrays",
                             f"at most {MAX_DEPTH} levels", None)
        stack.extend((v, depth + 1, (*parts, k)) for k, v in items if isinstance(v, (dict, list)))
    return None


def _semantic(doc: dict[str, Any], base_dir: str, registry: Any) -> Iterator[Violation]:
    yield from _path_problems(doc, base_dir)
    for i, rule in enumerate(doc["reward_logic"]["rules"]):
        info = registry.metrics.get(rule.get("metric"))
        if info and info.direction == "lower" and "threshold" not in rule:
            yield Violation(f"/reward_logic/rules/{i}/threshold",
                            f"metric {info.name!r} is lower-is-better and needs a threshold (the value "
                            "scoring 0 under linear scoring, the pass mark under step scoring)", "a number > 0", None)
        gate = rule.get("gate")
        if gate and "min" not in gate and "max" not in gate:
            yield Violation(f"/reward_logic/rules/{i}/gate", "a gate needs 'min' and/or 'max'", "min or max", gate)
    root = (doc.get("workspace") or {}).get("root", DEFAULT_ROOT)
    for i, step in enumerate(doc["execution_steps"]):
        path = step.get("path")
        if isinstance(path, str) and path.startswith("/") and not (path + "/").startswith(root.rstrip("/") + "/"):
            yield Violation(f"/execution_steps/{i}/path", f"path is outside the workspace root {root}",
                            f"a path below {root}", path)


def parse_task(doc: Any, source: str = "<memory>", base_dir: str = ".", suite: str | None = None) -> TaskSpec:
    """Validate a decoded task document and build its :class:`TaskSpec`."""
    from ._plugins import registry as current

    reg = current()
    if not isinstance(doc, dict):
        raise TaskSpecError(source, [Violation("", "a task document is a JSON object", "object", type(doc).__name__)])
    deep = _too_deep(doc)
    if deep is not None:
        raise TaskSpecError(source, [deep])
    problems = list(_violations(doc, task_schema(reg), reg))
    if not problems:
        problems = list(_semantic(doc, base_dir, reg))
    if problems:
        raise TaskSpecError(source, problems)
    return _build(doc, source, base_dir, suite)


def _build(doc: dict[str, Any], source: str, base_dir: str, suite: str | None) -> TaskSpec:
    env = doc["environment_config"]
    ws = doc.get("workspace", {})
    rl = doc["reward_logic"]
    rules = tuple(
        RewardRule(weight=float(r["weight"]), metric=r.get("metric"), reward_model=r.get("reward_model"),
                   aggregation=r.get("aggregation", "last"),
                   threshold=float(r["threshold"]) if "threshold" in r else None,
                   scoring=r.get("scoring", "linear"),
                   gate=Gate(r["gate"]["metric"], r["gate"].get("min"), r["gate"].get("max")) if "gate" in r else None,
                   options=dict(r.get("options", {})))
        for r in rl["rules"]
    )
    default = Limits()
    lim = doc.get("limits", {})
    limits = Limits(**{k: lim.get(k, getattr(default, k)) for k in default.to_json()})

    def fileset(key: str) -> FileSet | None:
        section = doc.get(key)
        if section is None:
            return None
        return FileSet(section.get("directory"), dict(section.get("files", {})), base_dir,
                       sdist=Sdist.from_json(section["sdist"]) if "sdist" in section else None,
                       source=source, section=key)

    return TaskSpec(
        task_id=doc["task_id"],
        version=doc.get("version", 0),
        description=doc.get("description", ""),
        environment=EnvironmentConfig(env["runtime"], tuple(env.get("dependencies", ())), dict(env.get("env", {}))),
        workspace=Workspace(ws.get("directory"), dict(ws.get("files", {})), base_dir, ws.get("root", DEFAULT_ROOT),
                            sdist=Sdist.from_json(ws["sdist"]) if "sdist" in ws else None, source=source,
                            section="workspace"),
        protected_paths=tuple(doc.get("protected_paths", DEFAULT_PROTECTED)),
        hidden_files=fileset("hidden_files"),
        execution_steps=tuple(dict(s) for s in doc["execution_steps"]),
        reward=RewardLogic(rules, rl["type"], float(rl.get("success_threshold", 1.0))),
        limits=limits,
        max_rounds=doc.get("max_rounds", 20),
        terminate_on_success=doc.get("terminate_on_success", False),
        reference_solution=fileset("reference_solution"),
        tags=tuple(doc.get("tags", ())),
        difficulty=doc.get("difficulty"),
        expected_duration_s=doc.get("expected_duration_s"),
        metadata=dict(doc.get("metadata", {})),
        source=source,
        suite=suite,
        written=tuple(doc),
    )


def load_task(path: str | os.PathLike[str], suite: str | None = None) -> TaskSpec:
    """Load and validate a task file. Raises :class:`TaskSpecError` with every violation."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_TASK_BYTES + 1)
    except OSError as exc:
        raise TaskSpecError(path, [Violation("", f"cannot read the file: {exc.strerror}", "a readable file", path)]) from exc
    if len(raw) > MAX_TASK_BYTES:
        raise TaskSpecError(path, [Violation("", f"the file is larger than {MAX_TASK_BYTES} bytes; put big files in "
                                                 "the task's workspace directory instead of inline",
                                             f"at most {MAX_TASK_BYTES} bytes", None)])
    try:
        doc = json.loads(raw)
    except RecursionError:  # the decoder recurses once per level: deep nesting exhausts the stack
        raise TaskSpecError(path, [Violation("", f"not a usable task document: it nests too deep for the JSON decoder "
                                                 f"(a task document has at most {MAX_DEPTH} levels)",
                                             f"at most {MAX_DEPTH} levels of objects and arrays", None)]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f"line {exc.lineno}, column {exc.colno}: " if isinstance(exc, json.JSONDecodeError) else ""
        raise TaskSpecError(path, [Violation("", f"not valid JSON: {where}{exc}", "a JSON object", None)]) from exc
    except ValueError as exc:  # e.g. an integer of more digits than int() converts
        raise TaskSpecError(path, [Violation("", f"not a usable JSON document: {exc}", "a JSON object", None)]) from exc
    return parse_task(doc, path, os.path.dirname(os.path.abspath(path)), suite)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``**/`` spans any number of directories (zero too), ``*`` one name."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def matches_any(path: str, patterns: tuple[str, ...]) -> bool:
    return any(glob_to_regex(p).match(path) for p in patterns)
