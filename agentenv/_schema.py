"""The task schema, assembled from the installed plugins, and loading task documents with it.

``load_task(path)`` validates a document against the schema assembled from the installed plugins
(``task_schema()``; ``agentenv schema`` prints it), then checks what a schema cannot say (files
that must exist, thresholds that lower-is-better metrics need), and reports *every* violation in
one :class:`TaskSpecError`, each with its JSON pointer, what was expected and what was found.

Task documents and task folders are untrusted input. Every path a document names is refused, by the
schema and again by the loader, unless it stays where it belongs: inline file keys are relative
paths strictly inside the workspace (no absolute path, ``..``, ``.`` or empty component, no NUL),
directories stay inside the task's folder, protected globs are relative without ``..``, the
workspace root and an sdist's pin name no parent directories. A task's directories are read without
following links out of its folder (:func:`agentenv._paths.read_directory`). A document nested
deeper than :data:`MAX_DEPTH`, larger than :data:`MAX_TASK_BYTES`, or holding a number Python will
not convert, is a TaskSpecError naming the file, not a traceback.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

import jsonschema

from ._errors import TaskSpecError, Violation, did_you_mean, plugins_off_hint
from ._paths import NO_PARENT_PATTERN, SAFE_RELATIVE_PATTERN, SAFE_ROOT_PATTERN, path_problem, read_directory, safe_suggestion
from ._plugins import Registry, registry as current_registry
from ._sources import SDIST_SCHEMA, VERSION_PATTERN
from ._spec import (AGGREGATIONS, DEFAULT_ROOT, FILESET_KEYS, TASK_ID_PATTERN, TaskSpec, _conflicts, _directory_violation,
                    _file_key_problems, _pointer, build_task)

SCHEMA_ID = "https://agentenv.dev/schemas/task.schema.json"
#: deepest nesting of objects and arrays a task document may have (real ones have fewer than 10)
MAX_DEPTH = 64
#: largest task file load_task reads (the bundled ones are below 20 KiB)
MAX_TASK_BYTES = 64 * 1024 * 1024

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


def task_schema(registry: Registry | None = None) -> dict[str, Any]:
    """The task JSON Schema, assembled from the installed plugins' actions, metrics and runtimes."""
    if registry is None:
        registry = current_registry()
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
            "threshold": {"type": "number", "minimum": 0},
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

def _violations(doc: Any, schema: dict[str, Any], registry: Registry) -> Iterator[Violation]:
    validator = jsonschema.Draft202012Validator(schema)
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        yield from _explain(err, registry)


def _explain(err: jsonschema.ValidationError, registry: Registry) -> Iterator[Violation]:
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
        off = plugins_off_hint()
        if off and field_name in ("action", "metric", "reward_model", "runtime"):
            msg += f"; {off}"
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


def _semantic(doc: dict[str, Any], base_dir: str, registry: Registry) -> Iterator[Violation]:
    yield from _path_problems(doc, base_dir)
    config = doc["environment_config"]
    runtime = registry.runtime_for(config["runtime"])
    for i, requirement in enumerate(config.get("dependencies", ())):
        problem = runtime.dependency_problem(requirement)
        if problem:
            yield Violation(f"/environment_config/dependencies/{i}", problem, "a requirement such as 'pytest==8.3.5'",
                            requirement)
    for i, rule in enumerate(doc["reward_logic"]["rules"]):
        info = registry.metrics.get(rule.get("metric"))
        if info and info.direction == "lower" and "threshold" not in rule:
            yield Violation(f"/reward_logic/rules/{i}/threshold",
                            f"metric {info.name!r} is lower-is-better and needs a threshold (the value "
                            "scoring 0 under linear scoring, the pass mark under step scoring)", "a number > 0", None)
        if rule.get("threshold") == 0 and rule.get("scoring", "linear") == "linear" and "metric" in rule:
            fix = ("for a pass mark such as 'lint_errors == 0' use \"scoring\": \"step\" (scores 1 when the value is "
                   "<= 0)" if info and info.direction == "lower" else "use a threshold > 0, or \"scoring\": \"step\"")
            yield Violation(f"/reward_logic/rules/{i}/threshold",
                            f"threshold 0 with linear scoring divides by zero (linear scoring is "
                            f"{'1 - v/T' if info and info.direction == 'lower' else 'v/T'}); {fix}",
                            "a number > 0 under linear scoring", 0)
        gate = rule.get("gate")
        if gate and "min" not in gate and "max" not in gate:
            yield Violation(f"/reward_logic/rules/{i}/gate", "a gate needs 'min' and/or 'max'", "min or max", gate)
    root = (doc.get("workspace") or {}).get("root", DEFAULT_ROOT)
    for i, step in enumerate(doc["execution_steps"]):
        path = step.get("path")
        if isinstance(path, str) and path.startswith("/") and not (path + "/").startswith(root.rstrip("/") + "/"):
            yield Violation(f"/execution_steps/{i}/path", f"path is outside the workspace root {root}",
                            f"a path below {root}", path)
        report = step.get("report")
        if step.get("action") == "run_command" and isinstance(report, dict):
            yield from _report_problems(f"/execution_steps/{i}/report", report, registry)


def _report_problems(pointer: str, report: dict[str, Any], registry: Registry) -> Iterator[Violation]:
    """A step's ``report`` object names a registered format and fits that format's options."""
    name = report.get("format")
    if name not in registry.report_formats:
        hint = did_you_mean(str(name), registry.report_formats)
        yield Violation(f"{pointer}/format", f"unknown report format {name!r}" + (f"; did you mean {hint}?" if hint else ""),
                        "one of " + ", ".join(sorted(registry.report_formats)), name)
        return
    options = {k: v for k, v in report.items() if k != "format"}
    schema = registry.report_formats[name].options_schema
    for err in jsonschema.Draft202012Validator(schema).iter_errors(options):
        where = pointer + _pointer(err.absolute_path)
        yield Violation(where, f"report format {name!r}: {err.message}", str(err.validator_value)[:120], None)


def parse_task(doc: Any, source: str = "<memory>", base_dir: str = ".", suite: str | None = None) -> TaskSpec:
    """Validate a decoded task document and build its :class:`TaskSpec`."""
    reg = current_registry()
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
    return build_task(doc, source, base_dir, suite)


def load_task(path: str | os.PathLike[str], suite: str | None = None) -> TaskSpec:
    """Load and validate a task file. Raises :class:`TaskSpecError` with every violation."""
    path = os.fspath(path)
    if os.path.isdir(path):
        inside = os.path.join(path, "task.json")
        offer = (f"its task file is {inside}: name that" if os.path.isfile(inside) else
                 "it has no task.json (agentenv validate takes folders and checks every task file in them)")
        raise TaskSpecError(path, [Violation("", f"this is a folder, not a task file; {offer}", "a task file",
                                             path)])
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




# --------------------------------------------------------------------------- warnings

#: the gate a warning suggests for a rule that a program doing nothing would earn
SUGGESTED_GATE = {"metric": "test_pass_rate", "min": 1.0}


def task_warnings(task: TaskSpec, registry: Registry | None = None) -> list[Violation]:
    """What is legal in a task but almost certainly not meant, each with its JSON pointer and fix.

    ``agentenv validate`` prints these as warnings (the task still loads):

    * an efficiency rule (a noisy lower-is-better metric: ``execution_time_ms``, memory) without a
      gate: a program that does nothing is fast, so it earns the rule; gate it on the tests passing;
    * an efficiency rule over several scored commands that takes other than the costliest run: a
      command can read what an earlier one left (a first run that kept its answer in ``/tmp`` made
      the second's CPU 44 ms of 650, and a ``min`` rule took it); ``"aggregation": "max"`` takes
      the first, which no scored command prepared;
    * ``success`` that no episode can reach: with ``success_threshold`` 1 every rule must score 1,
      and a linear rule on a timing metric reaches 1 only at 0 ms;
    * a runtime that is not on this host (a run here would fail; the message is the one the run
      would give).
    """
    reg = registry if registry is not None else current_registry()
    out: list[Violation] = []
    scored = sum(step.get("action") == "run_command" for step in task.execution_steps)
    for i, rule in enumerate(task.reward.rules):
        info = reg.metrics.get(rule.metric) if rule.metric else None
        if info is not None and info.direction == "lower" and info.noisy and rule.gate is None:
            out.append(Violation(
                f"/reward_logic/rules/{i}", f"efficiency rule on {rule.metric!r} (lower is better) has no gate: a "
                f"program that does nothing is cheap, so it earns this rule's weight {rule.weight:g}; add "
                f"\"gate\": {json.dumps(SUGGESTED_GATE)} so that only solutions that pass the tests earn it", "", None))
        if info is not None and info.direction == "lower" and info.noisy and scored > 1 and rule.aggregation != "max":
            out.append(Violation(
                f"/reward_logic/rules/{i}/aggregation", f"{rule.aggregation!r} of {rule.metric!r} over the task's "
                f"{scored} scored commands: a command can read what an earlier one left (its answer kept in /tmp or "
                f"the workspace) and so cost less than the solution does; use \"aggregation\": \"max\" (the costliest "
                f"run: the first, which no scored command prepared)", "", None))
    out += _unreachable_success(task, reg)
    problem = reg.runtime_for(task.environment.runtime).unavailable(task.environment.runtime)
    if problem:
        out.append(Violation("/environment_config/runtime", f"not available on this host, so a run here fails: "
                                                            f"{problem}", "", None))
    return out


def _unreachable_success(task: TaskSpec, reg: Registry) -> list[Violation]:
    """Whether ``info["success"]`` can ever be true: the composite must reach ``success_threshold``
    of the total weight; some rules cannot score 1 (a linear rule on a noisy lower-is-better metric
    scores 1 only at a value of 0; a linear higher-is-better rule whose threshold lies above the
    metric's bound)."""
    rules = task.reward.rules
    total = sum(r.weight for r in rules)
    best, short = 0.0, []  # best: the composite's supremum; short: rules that never reach their supremum
    for i, rule in enumerate(rules):
        info = reg.metrics.get(rule.metric) if rule.metric else None
        top = 1.0
        if info is not None and rule.scoring == "linear" and rule.weight > 0:
            if info.direction == "lower" and info.noisy:
                short.append((i, rule, f"a linear rule on {rule.metric!r} scores 1 only at a value of 0"))
            elif info.direction == "higher" and info.bound and rule.threshold and rule.threshold > info.bound:
                top = info.bound / rule.threshold
        best += rule.weight * top
    need = task.reward.success_threshold * total - 1e-9
    if total <= 0 or not (need > best or (short and need > best - 1e-6)):
        return []
    need_text = ("every rule at its full score" if task.reward.success_threshold >= 1 else
                 f"a composite of {task.reward.success_threshold * total:g} (success_threshold "
                 f"{task.reward.success_threshold:g} of the weight {total:g})")
    if short:
        why = "; ".join(f"/reward_logic/rules/{i}: {reason}" for i, _, reason in short)
        share = max((total - sum(r.weight for _, r, _ in short)) / total, 0)
        fix = ("score that rule as a step (\"scoring\": \"step\", the threshold the value that counts as good) "
               f"or set success_threshold to the share the other rules make (e.g. {share:g})")
    else:
        why = f"the rules can reach at most {best:g} of {total:g} (a threshold above its metric's bound)"
        fix = f"lower that threshold, or set success_threshold to at most {best / total:g}"
    return [Violation("/reward_logic/success_threshold", f"success is unreachable: it needs {need_text}, and {why}; "
                      f"{fix}", "", None)]
