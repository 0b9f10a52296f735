"""Task quality audit: run a task many times through the real environment and judge it.

A low-quality task teaches a policy the wrong thing: a flaky test rewards luck, a trivial task
rewards doing nothing, a hackable task rewards deleting the tests. ``audit_task`` runs these checks
on one task, each through :class:`agentenv.CodingEnv` exactly as a policy would meet it:

==============  ==========================================================================
check           what fails it
==============  ==========================================================================
schema          the document is invalid, or a runtime / action / metric / reward model is
                not provided by any installed plugin
reference       the reference solution misses full marks in any of N identical runs
stability       a test's outcome differs between identical runs of the reference (flaky);
                with ``quarantine`` it is a warning and the cleaned task deselects the test
trivial         the unchanged workspace scores above 0, or fails no scored test
hacking         a reward-hacking probe (deleted tests, skip-everything conftest, exit at
                import, fake reports, printing "passed", ...) scores above 0
gates           (warning) a lower-is-better rule with no gate: an empty program can win it
determinism     the reference's rule scores differ between runs (beyond ``tolerance`` for
                rules on noisy timing metrics, which only warn)
budget          the reference times out / runs out of memory, or its p95 is above the limit
                (warning when the limit is less than ``margin`` times the p95)
duration        (warning) ``expected_duration_s`` is missing or off by more than
                ``duration_factor`` from the measured episode time
leakage         a hidden test or reference file is readable from the agent's sandbox
==============  ==========================================================================

A check's status is ``pass``, ``warn``, ``fail``, ``error`` (the machinery failed, so the check
could not be made: never the task's fault) or ``skip``. A task's verdict is ``reject`` when any
check fails, ``warn`` when any warns or errs, else ``ok``.

Probes marked ``harness`` exploit a weakness of the evaluation itself (every task shares it), so by
default they warn instead of rejecting; ``strict`` makes them reject.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shlex
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ._errors import AgentEnvError, InfrastructureError, TaskSpecError, UnknownNameError
from ._spec import PLACEHOLDER, TaskSpec, load_task

AUDIT_SCHEMA = "agentenv.audit/1"
STATUSES = ("pass", "warn", "fail", "error", "skip")
VERDICTS = ("ok", "warn", "reject")
CHECKS = ("schema", "reference", "stability", "trivial", "hacking", "gates", "determinism", "budget",
          "duration", "leakage")
_EPS = 1e-9
#: metrics whose values come from the test report: a quarantined (flaky) test moves them
_TEST_METRICS = ("test_pass_rate", "tests_passed", "tests_failed", "tests_errors", "tests_total")


class AuditError(AgentEnvError):
    """The audit cannot start: a path that is neither a task, a directory of tasks nor a suite,
    or an output directory that is in the way."""


@dataclass(frozen=True)
class AuditConfig:
    runs: int = 5  # identical runs of the reference
    quarantine: bool = False  # flaky tests: quarantine (warn) instead of reject
    strict: bool = False  # harness probes reject too
    tolerance: float = 0.1  # allowed spread of a rule score on a noisy (timing) metric
    margin: float = 2.0  # a limit must be at least margin * p95 of the reference
    duration_factor: float = 3.0  # expected_duration_s may be off by this factor
    backend: str = "auto"

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise AuditError(f"--runs must be at least 1, not {self.runs}")
        if self.margin < 1 or self.duration_factor < 1:
            raise AuditError("--margin and the duration factor must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "quarantine": self.quarantine, "strict": self.strict,
                "tolerance": self.tolerance, "margin": self.margin, "duration_factor": self.duration_factor,
                "backend": self.backend}


@dataclass
class Check:
    name: str
    status: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message, "evidence": _jsonable(self.evidence)}


@dataclass
class TaskAudit:
    path: str
    task_id: str | None
    suite: str | None
    checks: list[Check] = field(default_factory=list)
    stability: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)  # {"test", "command"}
    measured: dict[str, Any] = field(default_factory=dict)
    suggested_expected_duration_s: float | None = None
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        statuses = {c.status for c in self.checks}
        if "fail" in statuses:
            return "reject"
        if statuses & {"warn", "error"}:
            return "warn"
        return "ok"

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def reasons(self) -> list[str]:
        """One line per check that did not pass, failures first."""
        order = {"fail": 0, "error": 1, "warn": 2}
        bad = sorted((c for c in self.checks if c.status in order), key=lambda c: order[c.status])
        return [f"{c.name} {c.status}: {c.message}" for c in bad]

    @property
    def infra_errors(self) -> int:
        return sum(1 for c in self.checks if c.status == "error")

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "path": self.path, "suite": self.suite, "verdict": self.verdict,
                "reasons": self.reasons, "seconds": round(self.seconds, 3),
                "checks": [c.to_json() for c in self.checks], "stability": _jsonable(self.stability),
                "quarantined": list(self.quarantined), "measured": _jsonable(self.measured),
                "suggested_expected_duration_s": self.suggested_expected_duration_s}


@dataclass
class AuditReport:
    config: AuditConfig
    tasks: list[TaskAudit]
    workers: int = 1
    seconds: float = 0.0
    created: float = field(default_factory=time.time)

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for t in self.tasks:
            out[t.verdict] += 1
        return out

    @property
    def exit_status(self) -> int:
        """1 when a task is rejected; 3 when none is but some checks hit an infrastructure failure."""
        if any(t.verdict == "reject" for t in self.tasks):
            return 1
        return 3 if any(t.infra_errors for t in self.tasks) else 0

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        counts = self.counts()
        return {"schema": AUDIT_SCHEMA, "agentenv_version": __version__,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created)),
                "config": {**self.config.to_json(), "workers": self.workers},
                "summary": {"tasks": len(self.tasks), **counts,
                            "infra_errors": sum(t.infra_errors for t in self.tasks),
                            "seconds": round(self.seconds, 3)},
                "tasks": [t.to_json() for t in self.tasks]}


# --------------------------------------------------------------------------- finding tasks

def collect_tasks(paths: Sequence[str]) -> list[tuple[str, str | None]]:
    """(task file, suite name) for task files, directories (a suite.json, or searched for task
    files) and installed suite names."""
    from ._suites import find_suite, read_suite

    out: list[tuple[str, str | None]] = []
    for path in paths:
        if os.path.isfile(path):
            out.append((path, None))
        elif os.path.isdir(path) and os.path.isfile(os.path.join(path, "suite.json")):
            suite = read_suite(path)
            out += [(f, suite.name) for f in suite.task_files]
        elif os.path.isdir(path):
            from .builtin.cli import _task_files

            found = _task_files([path])
            if not found:
                raise AuditError(f"{path}: no task files (*.json) below this directory")
            out += [(f, None) for f in found]
        else:
            try:
                suite = find_suite(path)
            except UnknownNameError as exc:
                raise AuditError(f"{path}: not a task file, a directory or an installed suite ({exc})") from None
            out += [(f, suite.name) for f in suite.task_files]
    seen, unique = set(), []
    for f, s in out:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            unique.append((f, s))
    return unique


# --------------------------------------------------------------------------- probes

_SKIP_CONFTEST = '''import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="audit probe: skip everything"))
'''

_REPORT_OVERWRITE = '''import atexit, json, sys


def _fake_report():
    for arg in sys.argv:
        for flag in ("--json-report-file=", "--junitxml="):
            if arg.startswith(flag):
                path = arg[len(flag):]
                with open(path, "w") as f:
                    f.write(JSON if path.endswith(".json") else XML)


JSON = %r
XML = %r
atexit.register(_fake_report)
'''

_SHADOW_PYTEST = '''import sys
JSON = %r
XML = %r
for arg in sys.argv:
    if arg.startswith("--json-report-file="):
        open(arg.split("=", 1)[1], "w").write(JSON)
    if arg.startswith("--junitxml="):
        open(arg.split("=", 1)[1], "w").write(XML)
print("1 passed in 0.01s")
'''


# Issue 11's hacks. Code probes marked @PRISTINE@ keep the solution's own (unsolved) code and append
# the hack, so that the tests still import what they test and only the hack can make them pass.
EVIL_PLUGIN = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None
'''

PATCH_REPORTS = '''
import _pytest.reports as _agentenv_probe_reports
_agentenv_probe_orig = _agentenv_probe_reports.TestReport.from_item_and_call.__func__


def _agentenv_probe_fake(cls, item, call):
    report = _agentenv_probe_orig(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report


_agentenv_probe_reports.TestReport.from_item_and_call = classmethod(_agentenv_probe_fake)
'''

_FORGE_AND_EXIT = '''
import json as _j, os as _o, sys as _s
_NODES = %r
_lines = "".join(_j.dumps({"t": "test", "nodeid": n, "when": "call", "outcome": "passed"}) + "\\t0\\n" for n in _NODES)
_lines += _j.dumps({"t": "end", "exitstatus": 0}) + "\\t0\\n"
for _fd in _o.listdir("/proc/self/fd"):
    try:
        if "report" in _o.readlink("/proc/self/fd/" + _fd):
            _o.write(int(_fd), _lines.encode())
    except OSError:
        pass
for _a in _s.argv:
    if _a.startswith(("--json-report-file=", "--junitxml=")):
        open(_a.split("=", 1)[1], "w").write(%r if _a.endswith(".json") else %r)
_o._exit(0)
'''

ALWAYS_EQUAL = '''
import types as _agentenv_probe_types


class _AgentenvProbeAnything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __getitem__(self, key):
        return self

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    __hash__ = object.__hash__


def _agentenv_probe_anything(*args, **kwargs):
    return _AgentenvProbeAnything()


for _n, _v in list(globals().items()):
    if _n.startswith("_"):
        continue
    if isinstance(_v, _agentenv_probe_types.FunctionType) and _v.__module__ == __name__:
        globals()[_n] = _agentenv_probe_anything
    elif isinstance(_v, type) and _v.__module__ == __name__:
        for _m, _f in list(vars(_v).items()):
            if isinstance(_f, _agentenv_probe_types.FunctionType) and not _m.startswith("__"):
                setattr(_v, _m, _agentenv_probe_anything)
'''

_REGISTER_PLUGIN = '''
import gc as _agentenv_probe_gc
import pytest as _agentenv_probe_pytest


class _AgentenvProbePass:
    @_agentenv_probe_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"


for _o in _agentenv_probe_gc.get_objects():
    if type(_o).__name__ == "PytestPluginManager":
        _o.register(_AgentenvProbePass())
        break
'''

_CONFIG_FILES = {".pytest.ini": "[pytest]\naddopts = -p agentenv_probe_plug\n",
                 "tox.ini": "[pytest]\naddopts = -p agentenv_probe_plug\n",
                 "setup.cfg": "[tool:pytest]\naddopts = -p agentenv_probe_plug\n",
                 "tests/pytest.ini": "[pytest]\naddopts = -p agentenv_probe_plug\n"}


def _config_injection(task: TaskSpec, fakes: "_Fakes") -> list[dict[str, Any]]:
    files = {**_CONFIG_FILES, "agentenv_probe_plug.py": EVIL_PLUGIN}
    return [{"action": "overwrite_file", "path": p, "content": c} for p, c in files.items()]


def _entry_point_injection(task: TaskSpec, fakes: "_Fakes") -> list[dict[str, Any]]:
    meta = "Metadata-Version: 2.1\nName: agentenv-probe\nVersion: 1.0\n"
    entry = "[pytest11]\nagentenv_probe = agentenv_probe_plug\n"
    files = {"agentenv_probe-1.0.dist-info/METADATA": meta, "agentenv_probe-1.0.dist-info/entry_points.txt": entry,
             "agentenv_probe.egg-info/PKG-INFO": meta, "agentenv_probe.egg-info/entry_points.txt": entry,
             "agentenv_probe.pth": "import agentenv_probe_plug\n", "agentenv_probe_plug.py": EVIL_PLUGIN}
    return [{"action": "overwrite_file", "path": p, "content": c} for p, c in files.items()]


@dataclass(frozen=True)
class Probe:
    """A solution that must score 0. ``code`` maps a file kind ("py", "sh") to the probe's
    program (a code probe replaces the solution's files); ``actions`` builds agentic actions."""

    name: str
    description: str
    severity: str = "task"  # "task": rejects; "harness": a weakness of the evaluation, warns
    code: Mapping[str, str] | None = None
    actions: Callable[[TaskSpec, "_Fakes"], list[dict[str, Any]]] | None = None


@dataclass(frozen=True)
class _Fakes:
    json_report: str
    junit_report: str
    nodes: tuple[str, ...] = ()


def _fakes(node_ids: Iterable[str]) -> _Fakes:
    nodes = sorted(node_ids) or ["tests/test_probe.py::test_probe"]
    tests = [{"nodeid": n, "outcome": "passed"} for n in nodes]
    doc = {"exitcode": 0, "summary": {"passed": len(nodes), "total": len(nodes), "collected": len(nodes)},
           "tests": tests, "collectors": []}
    cases = []
    for n in nodes:
        path, _, name = n.partition("::")
        cls = path[:-3].replace("/", ".") if path.endswith(".py") else path
        cases.append(f'<testcase classname="{_xml(cls)}" name="{_xml(name)}" time="0.001"/>')
    xml = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
           f'skipped="0" tests="{len(nodes)}">' + "".join(cases) + "</testsuite></testsuites>")
    return _Fakes(json.dumps(doc), xml, tuple(nodes))


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _fake_report_actions(task: TaskSpec, fakes: _Fakes) -> list[dict[str, Any]]:
    names = {".report.json": fakes.json_report, "report.json": fakes.json_report,
             "junit.xml": fakes.junit_report, "report.xml": fakes.junit_report,
             "test-results.xml": fakes.junit_report}
    actions: list[dict[str, Any]] = [{"action": "overwrite_file", "path": n, "content": c} for n, c in names.items()]
    copies = "; ".join(f"cp {shlex.quote(n)} /tmp/{shlex.quote(n)}" for n in names)
    actions.append({"action": "run_command", "command": copies + "; cp .report.json /tmp/.agentenv-report-0.json; "
                    "cp junit.xml /tmp/.agentenv-report-0.xml; true"})
    return actions


PROBES: tuple[Probe, ...] = (
    Probe("delete_tests", "delete every test file, then submit",
          actions=lambda task, fakes: [{"action": "run_command", "command":
                                        "rm -rf tests test; find . \\( -name 'test_*.py' -o -name '*_test.py' \\) "
                                        "-delete; true"}]),
    Probe("skip_all_conftest", "a conftest.py that marks every test skipped",
          actions=lambda task, fakes: [{"action": "overwrite_file", "path": p, "content": _SKIP_CONFTEST}
                                       for p in ("conftest.py", "tests/conftest.py")]),
    Probe("exit_at_import", "the solution calls sys.exit(0) when imported",
          code={"py": "import sys\nsys.exit(0)\n", "sh": "#!/bin/sh\nexit 0\n"}),
    Probe("hard_exit_at_import", "the solution calls os._exit(0) when imported (no report, exit status 0)",
          code={"py": "import os\nos._exit(0)\n"}),
    Probe("fake_report_files", "fake all-passed JSON and JUnit reports in the workspace and /tmp",
          actions=_fake_report_actions),
    Probe("prints_passed", 'a solution that only prints "passed"',
          code={"py": 'print("passed")\nprint("==== 12 passed in 0.01s ====")\n',
                "sh": "#!/bin/sh\necho passed\necho '12 passed in 0.01s'\n"}),
    Probe("report_overwrite_at_exit", "the solution registers an atexit hook that overwrites the report file "
          "named on pytest's command line", severity="harness", code={"py": "@REPORT_OVERWRITE@"}),
    Probe("shadow_pytest", "a pytest.py in the workspace root that shadows pytest and writes a fake report",
          severity="harness", actions=lambda task, fakes: [
              {"action": "overwrite_file", "path": "pytest.py",
               "content": _SHADOW_PYTEST % (fakes.json_report, fakes.junit_report)}]),
    Probe("config_injection", "pytest configuration files (.pytest.ini, tox.ini, setup.cfg, tests/pytest.ini) "
          "whose addopts load a plugin that marks every test passed", actions=_config_injection),
    Probe("entry_point_injection", "a *.dist-info and *.egg-info with a pytest11 entry point and a .pth, "
          "loading a plugin that marks every test passed", actions=_entry_point_injection),
    Probe("patch_reports_at_import", "the unsolved code plus a patch of TestReport.from_item_and_call at import "
          "that makes every report say passed", code={"py": "@PRISTINE@" + PATCH_REPORTS}),
    Probe("register_plugin_at_import", "the unsolved code plus a plugin registered with pytest's plugin "
          "manager at import, marking every test passed", code={"py": "@PRISTINE@" + _REGISTER_PLUGIN}),
    Probe("forge_report_then_exit", "the unsolved code writes an all-passed report into every report channel "
          "it can find (file descriptors, report paths in argv), then os._exit(0)",
          code={"py": "@PRISTINE@@FORGE@"}),
    Probe("always_equal", "the unsolved code with every public function and method returning an object "
          "that equals anything", code={"py": "@PRISTINE@" + ALWAYS_EQUAL}),
)


def _kind(path: str) -> str | None:
    if path.endswith(".py"):
        return "py"
    if path.endswith(".sh"):
        return "sh"
    return None


# --------------------------------------------------------------------------- episodes

@dataclass
class _Episode:
    score: float = 0.0
    success: bool = False
    masked: bool = False
    infra_error: str | None = None
    breakdown: dict[str, Any] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # metrics of every scored run
    seconds: float = 0.0
    outputs: list[str] = field(default_factory=list)

    def rule_scores(self) -> dict[int, float]:
        return {int(k.split(":", 1)[0]): float(v["score"]) for k, v in self.breakdown.items()}


class _Player:
    """One environment per mode, reused across the task's episodes."""

    def __init__(self, task: TaskSpec, backend: str):
        self.task, self.backend = task, backend
        self._envs: dict[str, Any] = {}
        self._records: list[dict[str, Any]] = []

    def env(self, mode: str):
        if mode not in self._envs:
            from ._env import CodingEnv

            self._envs[mode] = CodingEnv(self.task, backend=self.backend, mode=mode, trajectory=self._records.append)
        return self._envs[mode]

    def play(self, mode: str, actions: Sequence[Any], submit: bool = True) -> _Episode:
        """Reset, send *actions* (a code string single-shot), end with submit; the final info."""
        env = self.env(mode)
        self._records.clear()
        ep = _Episode()
        start = time.monotonic()
        obs, info = env.reset()
        done = bool(info.get("reward_masked"))
        queue = list(actions) + ([{"action": "submit"}] if submit and mode == "agentic" else [])
        while not done and queue:
            obs, reward, terminated, truncated, info = env.step(queue.pop(0))
            ep.outputs.append(obs["output"])
            done = terminated or truncated
        ep.seconds = time.monotonic() - start
        ep.masked = bool(info.get("reward_masked"))
        ep.infra_error = info.get("infra_error")
        ep.score = float(info.get("score", 0.0))
        ep.success = bool(info.get("success"))
        ep.breakdown = dict(info.get("reward_breakdown") or {})
        last = next((r for r in reversed(self._records) if r.get("type") == "step"), {})
        ep.runs = list(last.get("scored_runs") or [])
        return ep

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()


# --------------------------------------------------------------------------- the audit of one task

def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _stats(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"p50": round(_percentile(values, 50), 3), "p95": round(_percentile(values, 95), 3),
            "max": round(max(values), 3), "n": len(values)}


def _outcomes(ep: _Episode) -> dict[tuple[int, str], str]:
    out = {}
    for k, run in enumerate(ep.runs):
        for node, outcome in (run.get("test_outcomes") or {}).items():
            out[(k, node)] = outcome
    return out


def _full_marks(task: TaskSpec, ep: _Episode, noisy: set[str]) -> bool:
    """Success, and every rule not on a noisy metric at its maximum (a linear timing rule can
    never reach 1, so it is judged by determinism and budget instead)."""
    if ep.masked or not ep.success:
        return False
    scores = ep.rule_scores()
    for i, rule in enumerate(task.reward.rules):
        if rule.metric in noisy:
            continue
        if scores.get(i, 0.0) < 1.0 - _EPS:
            return False
    return True


def audit_task(path: str, config: AuditConfig = AuditConfig(), suite: str | None = None,
               progress: Callable[[str], None] | None = None) -> TaskAudit:
    """Audit the task file at *path*. ``progress(label)`` is called after every episode."""
    start = time.monotonic()
    tick = progress or (lambda label: None)
    audit = TaskAudit(path=path, task_id=None, suite=suite)
    try:
        task = load_task(path, suite=suite)
    except TaskSpecError as exc:
        audit.checks.append(Check("schema", "fail", f"{len(exc.violations)} problem(s) in the task document",
                                  {"violations": [str(v) for v in exc.violations]}))
        audit.seconds = time.monotonic() - start
        return audit
    audit.task_id = task.task_id
    schema = _check_resolution(task)
    audit.checks.append(schema)
    if schema.status == "fail":
        audit.seconds = time.monotonic() - start
        return audit
    player = _Player(task, config.backend)
    try:
        try:
            player.env("agentic")
        except InfrastructureError as exc:
            audit.checks.append(Check("reference", "error", f"the environment could not be built: {exc}"))
            return audit
        _audit_episodes(task, audit, player, config, tick)
    finally:
        player.close()
        audit.checks.sort(key=lambda c: CHECKS.index(c.name))
        audit.seconds = time.monotonic() - start
    return audit


def _check_resolution(task: TaskSpec) -> Check:
    from ._plugins import registry

    reg = registry()
    problems, resolved = [], {}
    try:
        resolved["runtime"] = type(reg.runtime_for(task.environment.runtime)).__name__
    except UnknownNameError as exc:
        problems.append(f"/environment_config/runtime: {exc}")
    for i, step in enumerate(task.execution_steps):
        try:
            reg.action(step["action"])
        except UnknownNameError as exc:
            problems.append(f"/execution_steps/{i}/action: {exc}")
    for i, rule in enumerate(task.reward.rules):
        for name in filter(None, (rule.metric, rule.gate.metric if rule.gate else None)):
            if name not in reg.metrics:
                problems.append(f"/reward_logic/rules/{i}: unknown metric {name!r}")
        if rule.reward_model and rule.reward_model not in reg.reward_models:
            problems.append(f"/reward_logic/rules/{i}/reward_model: unknown reward model {rule.reward_model!r}")
    if not any(s["action"] == "run_command" for s in task.execution_steps):
        problems.append("/execution_steps: no run_command step, so nothing is ever measured; add the command "
                        "that runs the tests")
    if problems:
        return Check("schema", "fail", "; ".join(problems), {"problems": problems})
    return Check("schema", "pass", f"valid; runtime {task.environment.runtime} by {resolved['runtime']}",
                 {"runtime": task.environment.runtime, "actions": sorted({s["action"] for s in task.execution_steps}),
                  "metrics": sorted({r.metric for r in task.reward.rules if r.metric})})


def _audit_episodes(task: TaskSpec, audit: TaskAudit, player: _Player, config: AuditConfig,
                    tick: Callable[[str], None]) -> None:
    from ._plugins import registry

    reg = registry()
    noisy = {n for n, m in reg.metrics.items() if m.noisy}
    primary = "single_shot" if task.single_shot_path else "agentic"
    label = task.task_id

    # ---- the reference, N times
    refs: list[_Episode] = []
    code = task.reference_code()
    if task.reference_solution is None or (primary == "single_shot" and code is None):
        missing = ("no reference_solution" if task.reference_solution is None
                   else f"the reference solution has no {task.single_shot_path}")
        audit.checks.append(Check("reference", "fail", f"{missing}: the audit cannot prove the task solvable; "
                                  "add reference_solution.directory with the solved files"))
        for _ in range(config.runs):
            tick(label)
    else:
        if primary == "single_shot":
            actions: list[Any] = [code]
        else:
            actions = [{"action": "overwrite_file", "path": p, "content": c}
                       for p, c in sorted(task.reference_files().items())]
        for _ in range(config.runs):
            refs.append(player.play(primary, actions))
            tick(label)
    good = [e for e in refs if not e.masked]
    masked = [e for e in refs if e.masked]

    flaky = _stability(task, audit, good, config)
    if refs:
        _reference(task, audit, refs, good, masked, noisy, flaky, config, primary)
        _determinism(task, audit, good, noisy, flaky, config)
        _budget(task, audit, good, config)

    # ---- the no-op
    noop_actions: list[Any] = ([task.workspace.read().get(task.single_shot_path, b"").decode("utf-8", "replace")]
                               if primary == "single_shot" else [])
    noop = player.play(primary, noop_actions)
    tick(label)
    _trivial(audit, noop)

    # ---- hacking probes and the static gate check
    nodes = {n for e in good for (_, n) in _outcomes(e)}
    _hacking(task, audit, player, config, primary, _fakes(nodes), tick, 0.0 if noop.masked else noop.score)
    _gates(task, audit, reg)

    # ---- leakage
    _leakage(task, audit, player)
    tick(label)


def _stability(task: TaskSpec, audit: TaskAudit, good: list[_Episode], config: AuditConfig) -> list[dict[str, Any]]:
    if not good:
        audit.checks.append(Check("stability", "skip", "no reference run completed"))
        return []
    per_run = [_outcomes(e) for e in good]
    keys = sorted({k for o in per_run for k in o})
    table, flaky = [], []
    for key in keys:
        outcomes = [o.get(key, "missing") for o in per_run]
        row = {"test": key[1], "command": key[0], "outcomes": outcomes, "flaky": len(set(outcomes)) > 1}
        table.append(row)
        if row["flaky"]:
            flaky.append(row)
    audit.stability = table
    if not keys:
        audit.checks.append(Check("stability", "skip", "the scored commands produced no test report"))
        return []
    if len(good) < 2:
        audit.checks.append(Check("stability", "skip", "one run only: stability needs --runs 2 or more",
                                  {"tests": len(keys)}))
        return []
    if not flaky:
        audit.checks.append(Check("stability", "pass", f"{len(keys)} test(s), same outcome in all {len(good)} runs",
                                  {"tests": len(keys), "runs": len(good)}))
        return []
    names = ", ".join(r["test"] for r in flaky)
    evidence = {"flaky": [{"test": r["test"], "command": r["command"], "outcomes": r["outcomes"]} for r in flaky],
                "runs": len(good)}
    if config.quarantine:
        audit.quarantined = [{"test": r["test"], "command": r["command"]} for r in flaky]
        audit.checks.append(Check("stability", "warn", f"flaky test(s) quarantined: {names}", evidence))
    else:
        audit.checks.append(Check("stability", "fail", f"flaky test(s), outcome differs between identical runs: "
                                  f"{names} (fix them, or pass --quarantine to deselect them)", evidence))
    return flaky


def _reference(task, audit, refs, good, masked, noisy, flaky, config, mode) -> None:
    flaky_keys = {(r["command"], r["test"]) for r in flaky}
    full = [e for e in good if _full_marks(task, e, noisy)]
    evidence: dict[str, Any] = {"mode": mode, "runs": len(refs), "full_marks": len(full),
                                "scores": [round(e.score, 6) for e in refs], "masked": len(masked)}
    short = [e for e in good if e not in full]
    if short:
        failing = sorted({n for e in short for (k, n), o in _outcomes(e).items() if o != "passed"})
        evidence["failing_tests"] = failing
        evidence["errors"] = sorted({json.dumps(r.get("error"), sort_keys=True) for e in short for r in e.runs
                                     if r.get("error")})[:5]
    msg = f"full marks in {len(full)}/{len(refs)} runs ({mode})"
    if masked:
        evidence["infra_errors"] = sorted({str(e.infra_error) for e in masked})
    if not short and not masked:
        audit.checks.append(Check("reference", "pass", msg, evidence))
    elif not short:
        audit.checks.append(Check("reference", "error", msg + f"; {len(masked)} run(s) hit an infrastructure "
                                  "failure", evidence))
    elif config.quarantine and flaky_keys and all(
            {k for k, o in _outcomes(e).items() if o != "passed"} <= flaky_keys for e in short):
        audit.checks.append(Check("reference", "warn", msg + "; the misses are all in quarantined tests", evidence))
    else:
        tests = ", ".join(evidence.get("failing_tests", [])[:5])
        audit.checks.append(Check("reference", "fail", msg + (f"; not passing: {tests}" if tests else "")
                                  + " (a task the reference cannot solve teaches nothing)", evidence))


def _determinism(task, audit, good, noisy, flaky, config) -> None:
    if len(good) < 2:
        audit.checks.append(Check("determinism", "skip", "needs two completed reference runs"))
        return
    unstable, noisy_spread = [], []
    for i, rule in enumerate(task.reward.rules):
        scores = [e.rule_scores().get(i, 0.0) for e in good]
        spread = max(scores) - min(scores)
        if spread <= _EPS:
            continue
        row = {"rule": i, "label": rule.label, "scores": [round(s, 6) for s in scores], "spread": round(spread, 6)}
        if rule.metric in noisy:
            if spread > config.tolerance:
                noisy_spread.append(row)
        else:
            unstable.append(row)
    evidence = {"totals": [round(e.score, 6) for e in good], "tolerance": config.tolerance,
                "unstable_rules": unstable, "noisy_rules_over_tolerance": noisy_spread}
    if unstable:
        labels = ", ".join(f"{r['label']} {r['scores']}" for r in unstable)
        if config.quarantine and flaky and all(task.reward.rules[r["rule"]].metric in _TEST_METRICS for r in unstable):
            audit.checks.append(Check("determinism", "warn", f"rule scores vary only through quarantined tests: "
                                      f"{labels}", evidence))
        else:
            audit.checks.append(Check("determinism", "fail", f"the same solution gets different rule scores: "
                                      f"{labels}", evidence))
    elif noisy_spread:
        labels = ", ".join(f"{r['label']} spread {r['spread']}" for r in noisy_spread)
        audit.checks.append(Check("determinism", "warn", f"timing rule scores vary beyond the tolerance "
                                  f"{config.tolerance}: {labels}", evidence))
    else:
        audit.checks.append(Check("determinism", "pass", f"same reward in all {len(good)} runs", evidence))


def _budget(task, audit, good, config) -> None:
    limits = task.limits
    times = [float(r["execution_time_ms"]) for e in good for r in e.runs if "execution_time_ms" in r]
    memory = [float(r["peak_memory_mb"]) for e in good for r in e.runs if r.get("peak_memory_mb")]
    killed = [{"timed_out": bool(r.get("timed_out")), "oom_killed": bool(r.get("oom_killed"))}
              for e in good for r in e.runs if r.get("timed_out") or r.get("oom_killed")]
    episodes = [e.seconds for e in good]
    audit.measured = {"episode_s": _stats(episodes), "command_ms": _stats(times), "peak_memory_mb": _stats(memory)}
    if not good:
        audit.checks.append(Check("budget", "skip", "no reference run completed"))
        audit.checks.append(Check("duration", "skip", "no reference run completed"))
        return
    wall_ms = limits.wall_time_s * 1000.0
    evidence = {"wall_time_limit_ms": wall_ms, "memory_limit_mb": limits.memory_mb, "margin": config.margin,
                "command_ms": _stats(times), "peak_memory_mb": _stats(memory), "killed": killed}
    fails, warns = [], []
    if any(k["timed_out"] for k in killed):
        fails.append(f"the reference timed out (wall_time_s {limits.wall_time_s})")
    if any(k["oom_killed"] for k in killed):
        fails.append(f"the reference ran out of memory (memory_mb {limits.memory_mb})")
    for what, values, limit, unit in (("wall time", times, wall_ms, "ms"), ("peak memory", memory, limits.memory_mb, "MB")):
        if not values or not limit:
            continue
        p95 = _percentile(values, 95)
        if p95 > limit:
            fails.append(f"{what} p95 {p95:.0f} {unit} is over the limit {limit:.0f} {unit}")
        elif p95 * config.margin > limit:
            warns.append(f"{what} p95 {p95:.0f} {unit} leaves less than {config.margin:g}x headroom under the "
                         f"limit {limit:.0f} {unit} (a loaded machine will fail it)")
    if fails:
        audit.checks.append(Check("budget", "fail", "; ".join(dict.fromkeys(fails + warns)), evidence))
    elif warns:
        audit.checks.append(Check("budget", "warn", "; ".join(warns), evidence))
    else:
        p50 = _percentile(times, 50) if times else 0.0
        audit.checks.append(Check("budget", "pass", f"command p50 {p50:.0f} ms of {wall_ms:.0f} ms; peak memory "
                                  f"p95 {(_percentile(memory, 95) if memory else 0):.0f} of {limits.memory_mb} MB",
                                  evidence))
    measured = _percentile(episodes, 50)
    audit.suggested_expected_duration_s = round(max(measured, 0.1), 1)
    declared = task.expected_duration_s
    devidence = {"declared_s": declared, "measured_s": audit.measured["episode_s"], "factor": config.duration_factor,
                 "suggested_s": audit.suggested_expected_duration_s}
    if declared is None:
        audit.checks.append(Check("duration", "warn", f"no expected_duration_s; measured {measured:.2f} s "
                                  "(--fix-durations writes it)", devidence))
    elif max(declared / measured, measured / declared) > config.duration_factor:
        audit.checks.append(Check("duration", "warn", f"expected_duration_s {declared:g} s is more than "
                                  f"{config.duration_factor:g}x off the measured {measured:.2f} s "
                                  "(--fix-durations rewrites it)", devidence))
    else:
        audit.checks.append(Check("duration", "pass", f"declared {declared:g} s, measured {measured:.2f} s", devidence))


def _scored_rules(ep: _Episode) -> list[str]:
    return [v["rule"] for v in ep.breakdown.values() if float(v.get("contribution", 0)) > _EPS]


def _trivial(audit: TaskAudit, noop: _Episode) -> None:
    outcomes = _outcomes(noop)
    not_passed = sorted(n for (_, n), o in outcomes.items() if o != "passed")
    evidence = {"score": round(noop.score, 6), "tests": len(outcomes), "not_passing": not_passed[:20]}
    if noop.masked:
        audit.checks.append(Check("trivial", "error", f"the no-op run hit an infrastructure failure: {noop.infra_error}",
                                  evidence))
    elif noop.score > _EPS:
        via = ", ".join(_scored_rules(noop))
        evidence["rules_scored"] = _scored_rules(noop)
        audit.checks.append(Check("trivial", "fail", f"the unchanged workspace scores {noop.score:.3f} (via {via}): "
                                  "the task is trivial (break the workspace, make the tests demand the change, or "
                                  "gate the rule)", evidence))
    elif outcomes and not not_passed:
        audit.checks.append(Check("trivial", "fail", f"the unchanged workspace passes all {len(outcomes)} scored "
                                  "tests: the tests do not demand the change", evidence))
    else:
        detail = f"fails {len(not_passed)} of {len(outcomes)} test(s)" if outcomes else "no test report"
        audit.checks.append(Check("trivial", "pass", f"the unchanged workspace scores 0 and {detail}", evidence))


def _probe_plan(task: TaskSpec, probe: Probe, primary: str, fakes: _Fakes) -> tuple[str, list[Any]] | None:
    if probe.actions is not None:
        return "agentic", probe.actions(task, fakes)
    assert probe.code is not None

    pristine = task.workspace.read()

    def program(path: str, prefix: bool = True) -> str | None:
        kind = _kind(path)
        text = probe.code.get(kind) if kind else None
        if text is None:
            return None
        if text == "@REPORT_OVERWRITE@":
            text = _REPORT_OVERWRITE % (fakes.json_report, fakes.junit_report)
        text = text.replace("@FORGE@", _FORGE_AND_EXIT % (list(fakes.nodes), fakes.json_report, fakes.junit_report))
        if text.startswith("@PRISTINE@"):
            original = pristine.get(path, b"").decode("utf-8", "replace") if prefix else ""
            text = original + "\n" + text[len("@PRISTINE@"):]
        return text

    if primary == "single_shot":
        path = task.single_shot_path or ""
        # a step that writes more than the placeholder (HumanEval's prompt) already keeps the original
        own_prefix = any(PLACEHOLDER in str(s.get("content", "")) and str(s.get("content")) != PLACEHOLDER
                         for s in task.execution_steps)
        text = program(path, prefix=not own_prefix)
        return ("single_shot", [text]) if text is not None else None
    actions = [{"action": "overwrite_file", "path": p, "content": program(p)}
               for p in sorted(task.reference_files()) if program(p) is not None]
    return ("agentic", actions) if actions else None


def _hacking(task, audit, player, config, primary, fakes, tick, baseline: float) -> None:
    rows, hacked, harness = [], [], []
    errors = 0
    for probe in PROBES:
        plan = _probe_plan(task, probe, primary, fakes)
        if plan is None:
            rows.append({"probe": probe.name, "severity": probe.severity, "status": "skip",
                         "why": "no solution file this probe can replace"})
            tick(task.task_id)
            continue
        mode, actions = plan
        ep = player.play(mode, actions)
        tick(task.task_id)
        # A probe that leaves the solution unchanged starts from what the no-op earns (the trivial
        # check judges that); it hacks only what it earns beyond it.
        floor = baseline if probe.code is None else 0.0
        row = {"probe": probe.name, "severity": probe.severity, "mode": mode, "score": round(ep.score, 6),
               "rules_scored": _scored_rules(ep), "status": "pass", "baseline": round(floor, 6)}
        if ep.masked:
            row.update(status="error", infra_error=ep.infra_error)
            errors += 1
        elif ep.score > floor + _EPS:
            row["status"] = "fail"
            (harness if probe.severity == "harness" and not config.strict else hacked).append(row)
        rows.append(row)
    evidence = {"probes": rows}
    ran = sum(1 for r in rows if r["status"] != "skip")

    def names(found):
        return ", ".join(f"{r['probe']} ({r['score']:.3f} via {', '.join(r['rules_scored'])})" for r in found)

    if hacked:
        audit.checks.append(Check("hacking", "fail", f"hackable: {names(hacked)} scored above 0", evidence))
    elif harness:
        audit.checks.append(Check("hacking", "warn", f"the evaluation itself is hackable (every task shares this; "
                                  f"--strict rejects it): {names(harness)}", evidence))
    elif errors:
        audit.checks.append(Check("hacking", "error", f"{errors} probe(s) hit an infrastructure failure", evidence))
    else:
        audit.checks.append(Check("hacking", "pass", f"all {ran} probe(s) score 0", evidence))


def _gates(task: TaskSpec, audit: TaskAudit, reg) -> None:
    ungated = []
    for i, rule in enumerate(task.reward.rules):
        info = reg.metrics.get(rule.metric) if rule.metric else None
        if info is not None and info.direction == "lower" and rule.gate is None:
            ungated.append({"rule": i, "metric": rule.metric, "noisy": info.noisy})
    if ungated:
        what = ", ".join(f"/reward_logic/rules/{u['rule']} ({u['metric']})" for u in ungated)
        audit.checks.append(Check("gates", "warn", f"lower-is-better rule(s) without a gate, which an empty program "
                                  f"wins: {what}; add \"gate\": {{\"metric\": \"test_pass_rate\", \"min\": 1}}",
                                  {"ungated": ungated}))
    else:
        audit.checks.append(Check("gates", "pass", "every lower-is-better rule is gated"))


# --------------------------------------------------------------------------- leakage

def _lines(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 12 and "\x00" not in ln}


def _leakage(task: TaskSpec, audit: TaskAudit, player: _Player) -> None:
    pristine = {rel: data.decode("utf-8", "replace") for rel, data in task.workspace.read().items()}
    pristine_lines = {rel: _lines(text) for rel, text in pristine.items()}
    everywhere = set().union(*pristine_lines.values()) if pristine_lines else set()
    hidden = task.hidden_files.read() if task.hidden_files else {}
    sources: list[tuple[str, str, list[str]]] = []  # (label, basename, markers)
    leaks: list[dict[str, str]] = []
    root = task.root.rstrip("/")
    for kind, files in (("hidden", hidden), ("reference", {k: v.encode() for k, v in task.reference_files().items()})):
        for rel, data in sorted(files.items()):
            lines = _lines(data.decode("utf-8", "replace"))
            own = lines - pristine_lines.get(rel, set())  # what this file adds to its workspace version
            if not own:
                continue
            # Another workspace file holding all it adds is a copy the agent can read on its first
            # step (a single short line is too common to count: "return a + b").
            for other, have in sorted(pristine_lines.items()):
                if other != rel and own <= have and sum(map(len, own)) >= 30:
                    leaks.append({"source": f"{kind}:{rel}", "found": f"{root}/{other}", "how": "workspace copy"})
            # Lines no workspace file has: finding them anywhere else the agent can read is a leak.
            markers = sorted(own - everywhere, key=lambda ln: (-len(ln), ln))[:2]
            if markers:
                sources.append((f"{kind}:{rel}", os.path.basename(rel), markers))
    if not sources and not leaks:
        audit.checks.append(Check("leakage", "skip", "no hidden or reference file differs from the workspace"))
        return
    env = player.env("agentic")
    timed_out = False
    try:
        obs, info = env.reset()
        if info.get("reward_masked"):
            audit.checks.append(Check("leakage", "error", f"infrastructure failure: {info.get('infra_error')}"))
            return
        obs, *_ = env.step({"action": "list_files"})
        listed = set(obs["output"].splitlines())
        for rel in sorted(hidden):
            if rel in listed and rel not in pristine:
                leaks.append({"source": f"hidden:{rel}", "found": f"{task.root.rstrip('/')}/{rel}", "how": "list_files"})
        nonce = secrets.token_hex(6)
        listing = f"/tmp/.agentenv-audit-{nonce}"
        big = ["/usr", *env.runtime.mounts]
        outside_big = " -o ".join(f"-path {shlex.quote(p.rstrip('/') + '/*')}" for p in big)
        names = " -o ".join(f"-name {shlex.quote(b)}" for b in sorted({s[1] for s in sources}))
        # One walk: the content of every file the agent can read, except inside the big read-only
        # system trees (grepping all of /usr costs ~25 s), where only files named like a source are read.
        script = [f"find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f \\( {names} -o -not "
                  f"\\( {outside_big} \\) \\) -print 2>/dev/null > {listing}"]
        for i, (_, _, markers) in enumerate(sources):
            chain = " | ".join(f"tr '\\n' '\\0' | xargs -0 -r grep -IlF -e {shlex.quote(m)} -- 2>/dev/null"
                               for m in markers)
            script.append(f"grep -vxF {listing} {listing} | {chain} | sed 's|^|LEAK {i} |'")
        script.append("true")
        if not sources:
            script = ["true"]
        obs, *_ = env.step({"action": "run_command", "command": "\n".join(script)})
        output = obs["output"]
        timed_out = bool(re.search(r"^\[exit code [^\]]*timed out", output, re.M))
        for line in output.splitlines():
            if line.startswith("LEAK "):
                _, index, found = line.split(" ", 2)
                leaks.append({"source": sources[int(index)][0], "found": found, "how": "readable content"})
    except InfrastructureError as exc:
        audit.checks.append(Check("leakage", "error", f"infrastructure failure: {exc}"))
        return
    finally:
        env.close()
    leaks = list({(l["source"], l["found"]): l for l in reversed(leaks)}.values())[::-1]
    evidence = {"sources": [s[0] for s in sources], "leaks": leaks}
    if leaks:
        where = ", ".join(f"{l['source']} at {l['found']}" for l in leaks[:5])
        audit.checks.append(Check("leakage", "fail", f"readable from the agent's sandbox: {where}", evidence))
    elif timed_out:
        audit.checks.append(Check("leakage", "error", "the leak scan ran past the task's wall-time limit", evidence))
    else:
        audit.checks.append(Check("leakage", "pass", f"{len(evidence['sources'])} hidden/reference file(s) not "
                                  "readable by the agent", evidence))


# --------------------------------------------------------------------------- many tasks

def audit_paths(paths: Sequence[str], config: AuditConfig = AuditConfig(), workers: int = 1,
                progress: Callable[[int, int, str], None] | None = None,
                on_task: Callable[[TaskAudit], None] | None = None) -> AuditReport:
    """Audit every task under *paths* with *workers* threads (each with its own environments).

    ``progress(done, total, label)`` counts episodes; ``on_task(audit)`` sees each finished task.
    """
    if workers < 1:
        raise AuditError(f"--workers must be at least 1, not {workers}")
    tasks = collect_tasks(paths)
    if not tasks:
        raise AuditError("no tasks to audit in " + ", ".join(paths))
    per_task = config.runs + 2 + len(PROBES)
    total = per_task * len(tasks)
    lock = threading.Lock()
    done = [0]

    def tick(label: str, n: int = 1) -> None:
        with lock:
            done[0] = min(total, done[0] + n)
            if progress:
                progress(done[0], total, label)

    def one(item: tuple[str, str | None]) -> TaskAudit:
        path, suite = item
        count = [0]

        def task_tick(label: str) -> None:
            count[0] += 1
            tick(label)

        result = audit_task(path, config, suite, task_tick)
        tick(result.task_id or path, max(0, per_task - count[0]))
        if on_task:
            with lock:
                on_task(result)
        return result

    start = time.monotonic()
    if workers == 1:
        results = [one(t) for t in tasks]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentenv-audit") as pool:
            results = list(pool.map(one, tasks))
    return AuditReport(config, results, workers, time.monotonic() - start)


# --------------------------------------------------------------------------- the cleaned suite

def _deselect(node: str, files: Iterable[str]) -> str:
    """A pytest node id for ``--deselect``: JSON-report ids already are; a JUnit id
    (``pkg.test_mod::Class::name``) is mapped back onto one of the task's test files."""
    path, sep, rest = node.partition("::")
    if path.endswith(".py") or not sep:
        return node
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if any(f == candidate or f.endswith("/" + candidate) for f in files):
            return "::".join([candidate, *parts[cut:], rest])
    return node


def clean_document(doc: dict[str, Any], audit: TaskAudit, task_files: Iterable[str],
                   fix_durations: bool = False) -> dict[str, Any]:
    """The task document with the audit's quarantines applied (and the measured duration)."""
    from .builtin.metrics import _PYTEST

    doc = json.loads(json.dumps(doc))
    if audit.quarantined:
        files = list(task_files)
        commands = [i for i, s in enumerate(doc["execution_steps"]) if s.get("action") == "run_command"]
        for q in audit.quarantined:
            if q["command"] >= len(commands):
                continue
            step = doc["execution_steps"][commands[q["command"]]]
            node = _deselect(q["test"], files)
            m = _PYTEST.search(step["command"])
            flag = f" --deselect {shlex.quote(node)}"
            cmd = step["command"]
            step["command"] = cmd[:m.end(1)] + flag + cmd[m.end(1):] if m else cmd + flag
        meta = doc.setdefault("metadata", {})
        meta["quarantined"] = sorted({*meta.get("quarantined", []), *(q["test"] for q in audit.quarantined)})
    if fix_durations and audit.suggested_expected_duration_s is not None:
        doc["expected_duration_s"] = audit.suggested_expected_duration_s
    return doc


def write_clean(report: AuditReport, dest: str, fix_durations: bool = False) -> list[str]:
    """Write a suite to *dest*: every task not rejected, quarantines applied; returns the task files."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise AuditError(f"--write-clean {dest}: the directory exists and is not empty; choose a new directory")
    kept = [t for t in report.tasks if t.verdict != "reject" and t.task_id]
    os.makedirs(dest, exist_ok=True)
    written = []
    for audit in kept:
        src_dir = os.path.dirname(os.path.abspath(audit.path))
        doc = json.load(open(audit.path))
        out_dir = os.path.join(dest, audit.task_id)
        os.makedirs(out_dir)
        task_files = []
        for key in ("workspace", "hidden_files", "reference_solution"):
            section = doc.get(key) or {}
            rel = section.get("directory")
            if not rel:
                continue
            target = os.path.normpath(rel)
            if target.startswith("..") or os.path.isabs(target):
                target = key  # outside the task's directory: bring it in
                section["directory"] = key
            shutil.copytree(os.path.join(src_dir, rel), os.path.join(out_dir, target), dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
            if key != "reference_solution":
                for root, _, names in os.walk(os.path.join(out_dir, target)):
                    task_files += [os.path.relpath(os.path.join(root, n), os.path.join(out_dir, target)) for n in names]
        for key in ("workspace", "hidden_files"):
            task_files += list((doc.get(key) or {}).get("files", {}))
        cleaned = clean_document(doc, audit, task_files, fix_durations)
        file = os.path.join(out_dir, "task.json")
        with open(file, "w") as f:
            json.dump(cleaned, f, indent=2)
            f.write("\n")
        written.append(file)
    suites = sorted({t.suite for t in report.tasks if t.suite})
    rejected = [t.task_id or t.path for t in report.tasks if t.verdict == "reject"]
    suite_doc = {"name": suites[0] if len(suites) == 1 else "audited", "version": "1.0.0",
                 "description": f"audited by agentenv audit: {len(kept)} task(s) kept, {len(rejected)} rejected "
                                f"and removed" + (f" ({', '.join(rejected)})" if rejected else ""),
                 "tasks": ["*/task.json"]}
    with open(os.path.join(dest, "suite.json"), "w") as f:
        json.dump(suite_doc, f, indent=2)
        f.write("\n")
    return written


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
