"""Task specifications: the frozen dataclasses a task document loads into, and their constants.

A :class:`TaskSpec` is built from a document that :func:`agentenv.load_task` (``_schema.py``) has
validated; this module knows nothing of plugins or schemas. Reading a file set
(:meth:`FileSet.read`) is where a task's folder is touched: inline keys must stay strictly inside the
workspace and directories are read without following links out of the task folder
(:func:`agentenv._paths.read_directory`), each refusal a :class:`TaskSpecError` with its pointer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Final, Iterator, Literal, Mapping

from ._errors import TaskSpecError, Violation
from ._paths import path_problem, read_directory, safe_suggestion
from ._sources import Sdist, sdist_files

#: the two ways to play a task (see :class:`agentenv.CodingEnv`)
SINGLE_SHOT: Final = "single_shot"
AGENTIC: Final = "agentic"
Mode = Literal["single_shot", "agentic"]
MODES: tuple[str, ...] = (SINGLE_SHOT, AGENTIC)
#: "terminal": the reward at the end; "dense": the change of the score after each step
RewardMode = Literal["terminal", "dense"]
REWARD_MODES: tuple[str, ...] = ("terminal", "dense")

DEFAULT_ROOT = "/app"
PLACEHOLDER = "<model_generated_code>"
DEFAULT_PROTECTED = ("tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                     "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
                     # a module in the workspace root shadows the test runner under `python -m pytest`
                     "pytest.py", "pytest/**", "_pytest/**", "pluggy.py", "pluggy/**", "py.py",
                     "pytest_jsonreport/**", "xdist/**")
AGGREGATIONS = ("max", "min", "mean", "last", "first")
TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.]*(?:-[A-Za-z0-9_.]+)*$"
FILESET_KEYS = ("workspace", "hidden_files", "reference_solution")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox; ``None`` means the backend default."""

    wall_time_s: float = 60.0  # per command, enforced from outside the sandbox
    memory_mb: int = 1024
    max_processes: int = 128
    max_output_bytes: int = 1 << 20  # per stream; the rest is dropped and flagged
    max_file_size_mb: int = 64  # largest file a process may write, and the workspace's size cap
    cpu_time_s: float | None = None
    network: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "wall_time_s": self.wall_time_s,
            "memory_mb": self.memory_mb,
            "max_processes": self.max_processes,
            "max_output_bytes": self.max_output_bytes,
            "max_file_size_mb": self.max_file_size_mb,
            "cpu_time_s": self.cpu_time_s,
            "network": self.network,
        }


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
        directory entry :func:`agentenv._paths.read_directory` refuses: the directory is read
        without following links out of the task folder (a link to a regular file inside the task
        folder is read as that file; every other link, and FIFOs and devices, are refused).
        """
        problems = [v for rel in self.files for v in _file_key_problems(self.section, rel)]
        if problems:
            raise TaskSpecError(self.source, problems)
        out: dict[str, bytes] = {}
        if self.sdist is not None:
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
        """The single-shot action that the reference solution corresponds to: the reference file, less
        the text the step writes around the placeholder where the file has it (a HumanEval task
        writes ``prompt + <completion>``; a prompt that ends at a signature, written twice, does not
        compile)."""
        path = self.single_shot_path
        code = self.reference_files().get(path) if path else None
        if code is None:
            return None
        for step in self.execution_steps:
            content = step.get("content")
            if step.get("action") == "overwrite_file" and isinstance(content, str) and PLACEHOLDER in content:
                before, _, after = content.partition(PLACEHOLDER)
                if PLACEHOLDER not in after and code.startswith(before) and code.endswith(after) and (
                        len(code) >= len(before) + len(after)):
                    return code[len(before):len(code) - len(after)]
                break
        return code

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


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


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


def build_task(doc: dict[str, Any], source: str, base_dir: str, suite: str | None) -> TaskSpec:
    """The :class:`TaskSpec` of a document that has been validated (``agentenv.parse_task``)."""
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

