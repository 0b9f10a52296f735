"""Built-in metrics: test outcomes (pytest JSON report or JUnit XML) and execution measurements.

For a scored command that runs pytest, the environment asks pytest for a report at a fresh,
unguessable path in the sandbox's /tmp (``--json-report-file`` when the command asks for
``--json-report``, ``--junitxml`` otherwise) and reads it back; nothing the program prints is
trusted. A missing or unparsable report (a crash, a collection error, ``sys.exit`` at import)
yields a pass rate of 0, never an exception.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import hookimpl
from .._extension import MetricInfo, MetricProvider, RunContext

_PYTEST = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))((?:\S*/)?(?:py\.test|pytest)|(?:\S*/)?python[\d.]*\s+(?:-\S+\s+)*?-m\s+pytest)(?=\s|$)")
_JSON_FILE = re.compile(r"--json-report-file[= ](\S+)")
_JUNIT_FILE = re.compile(r"--junit-?xml[= ](\S+)")


@dataclass(frozen=True)
class ScoredCommand:
    """How a scored command runs: the command itself, the files and environment it needs first."""

    command: str
    #: "judge" (the trusted pytest judge writes the report) or None (not a test command)
    kind: str | None = None
    report_path: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: sandbox path -> content, written just before the run
    files: Mapping[str, bytes] = field(default_factory=dict)
    key: bytes | None = None


_STRIPPED_OPTIONS = re.compile(r"\s--json-report-file[= ]\S+|\s--json-report-(?:indent|omit|summary)(?:[= ]\S+)?"
                               r"|\s--json-report\b|\s--junit-?xml[= ]\S+|\s-o\s+junit_family=\S+")
_CONFIG_NAMES = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "[tool.pytest.ini_options]"),
                 ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))
JUDGE_SOURCE = "_pytest_judge.py"


def _judge_source() -> bytes:
    with open(os.path.join(os.path.dirname(__file__), JUDGE_SOURCE), "rb") as f:
        return f.read()


def trusted_config(files: Mapping[str, bytes]) -> tuple[str, bytes]:
    """The pytest configuration the task itself provides (pristine and hidden files), as pytest would
    pick it at the workspace root; an empty one where there is none."""
    for name, section in _CONFIG_NAMES:
        data = files.get(name)
        if data is not None and (section is None or section.encode() in data):
            return name, data
    return "pytest.ini", b"[pytest]\n"


def scored_command(command: str, nonce: str, *, root: str = "/app", task_files: Mapping[str, bytes] | None = None,
                   trusted_files: Sequence[str] = (), pipe: bool = True,
                   pythonpath: str | None = None) -> ScoredCommand:
    """Instrument a scored command. A pytest command runs under the trusted judge (``_pytest_judge.py``):
    an explicit configuration taken from the task's own files (``-c``, ``--rootdir``), so nothing the
    agent writes (``.pytest.ini``, ``*.dist-info`` entry points, ``PYTEST_ADDOPTS``, planted
    ``__pycache__``) changes what pytest loads; the judge's report goes to a fresh, unguessable
    named pipe, line by line, each line authenticated with a key only the host and the judge know."""
    m = _PYTEST.search(command)
    if not m:
        return ScoredCommand(command)
    head, tail = command[:m.end(1)], _STRIPPED_OPTIONS.sub("", command[m.end(1):])
    work = f"/tmp/.agentenv-{nonce}"
    name, config = trusted_config(task_files or {})
    ini = f"{root.rstrip('/')}/.agentenv-{nonce}-{name.lstrip('.')}"  # at the root: ini-relative paths hold
    module = f"agentenv_judge_{nonce}"
    key = secrets.token_bytes(32)
    report = f"{work}/report"
    settings = {"report": report, "root": root, "ini": ini, "pipe": pipe, "prepend_cwd": bool(re.search(r"-m\s+pytest", head)),
                "trusted_files": sorted(trusted_files)}
    options = f" -p {module}"
    if not re.search(r"(?:^|\s)(?:-c|--config-file)[= ]", tail):
        options += f" -c {ini}"
    if "--rootdir" not in tail:
        options += f" --rootdir={root}"
    env = {"PYTHONPATH": f"{work}:{pythonpath}" if pythonpath else work, "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1", "PYTEST_ADDOPTS": "",
           "PYTEST_PLUGINS": "", "PYTHONPYCACHEPREFIX": f"{work}/pycache", "PYTHONDONTWRITEBYTECODE": "1"}
    files = {f"{work}/{module}.py": _judge_source(), f"{work}/judge.key": key,
             f"{work}/judge.json": json.dumps(settings).encode(), ini: config}
    return ScoredCommand(head + options + tail, "judge", report, env, files, key)


def verify_judge_report(data: bytes, key: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The judge's records whose MAC verifies, in order, and the problems found in the channel."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for seq, line in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
        text, _, mac = line.rpartition(b"\t")
        expected = hmac.new(key, str(seq).encode() + b":" + text, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, expected):
            problems.append(f"line {seq} of the test report is not the judge's (forged or out of order)")
            break
        try:
            records.append(json.loads(text))
        except ValueError:
            problems.append(f"line {seq} of the test report is not JSON")
            break
    if data and not data.endswith(b"\n") and not problems:
        problems.append("the test report ends in a partial line")
    return records, problems


def parse_judge_report(data: bytes | None, key: bytes, exit_code: int) -> dict[str, Any]:
    """Outcomes, the first error, completeness and integrity findings of a judge report."""
    records, channel = verify_judge_report(data or b"", key)
    integrity = [{"kind": "report-forged", "message": p} for p in channel]
    outcomes: dict[str, str] = {}
    error = None
    end = None
    for rec in records:
        t = rec.get("t")
        if t == "integrity":
            integrity.append({"kind": str(rec.get("kind")), "message": str(rec.get("message"))})
        elif t == "end":
            end = rec
        elif t in ("test", "collect"):
            node = str(rec.get("nodeid"))
            if t == "collect":
                node, outcome = f"{node}::<collection>", "error"
            else:
                outcome = _phase_outcome(rec, outcomes.get(node))
            outcomes[node] = outcome
            if error is None and outcome in ("failed", "error") and rec.get("longrepr"):
                error = parse_error(str(rec["longrepr"]))
                if error is not None:
                    error["test"] = node
    if end is not None and end.get("exitstatus") != exit_code and exit_code >= 0:
        integrity.append({"kind": "exit-status", "message": f"the judge saw exit status {end.get('exitstatus')}, "
                                                            f"the process exited {exit_code}"})
    return {"outcomes": outcomes, "error": error, "complete": end is not None and not channel,
            "integrity": integrity, "started": bool(records)}


def _phase_outcome(rec: Mapping[str, Any], before: str | None) -> str:
    when, outcome = rec.get("when"), rec.get("outcome")
    if when == "call":
        if rec.get("xfail"):
            return "passed" if outcome == "skipped" else "failed"
        return {"passed": "passed", "failed": "failed", "skipped": "skipped"}.get(str(outcome), "error")
    if outcome == "failed":
        return "error"
    if when == "setup":
        return "skipped" if outcome == "skipped" else (before or "error")  # "error" until the call reports
    return before or "error"


def collect_command(command: str) -> str | None:
    """The pytest command that only lists the tests *command* would run (None: not a pytest command)."""
    m = _PYTEST.search(command)
    if not m:
        return None
    command = _JSON_FILE.sub("", _JUNIT_FILE.sub("", command)).replace("--json-report", "")
    # node ids are listed one per line at verbosity -1 exactly: count the command's own -q / -v
    level = 0
    for token in command[m.end(1):].split():
        if re.fullmatch(r"-q+|-v+", token):
            level += len(token) - 1 if token[1] == "v" else -(len(token) - 1)
        elif token in ("--quiet", "--verbose"):
            level += 1 if token == "--verbose" else -1
    adjust = " -q" * max(0, level + 1) + " -v" * max(0, -1 - level)
    return command[:m.end(1)] + " --collect-only" + adjust + command[m.end(1):]


def junit_id(nodeid: str) -> str:
    """The id JUnit XML gives a pytest node: ``tests/test_a.py::C::t`` -> ``tests.test_a.C::t``."""
    path, *rest = nodeid.split("::")
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")
    return ".".join([module, *rest[:-1]]) + "::" + rest[-1] if rest else module


_EXC_LINE = re.compile(r"^(E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Warning))(?::\s*(.*?))?\s*$", re.M)
_ASSERT_LINE = re.compile(r"^E\s+(assert\b.*?)\s*$", re.M)


def parse_error(text: str) -> dict[str, str] | None:
    """Exception type and message of the first failure in a traceback or pytest long repr.

    pytest marks the explanation lines with ``E``; those win over other lines that look alike."""
    if not text:
        return None
    matches = list(_EXC_LINE.finditer(text))
    for m in sorted(matches, key=lambda m: (m.group(1) is None, m.start())):
        return {"type": m.group(2).split(".")[-1], "message": (m.group(3) or "").strip()[:500]}
    m = _ASSERT_LINE.search(text)
    if m:
        return {"type": "AssertionError", "message": m.group(1)[:500]}
    return None


def parse_json_report(data: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests", []), list):
        return None
    outcomes: dict[str, str] = {}
    error = None
    for test in doc.get("tests", []):
        if not isinstance(test, dict):
            continue
        node, outcome = str(test.get("nodeid", "?")), str(test.get("outcome", "error"))
        outcomes[node] = {"xfailed": "passed", "xpassed": "failed"}.get(outcome, outcome)
        if error is None and outcome in ("failed", "error"):
            for phase in ("setup", "call", "teardown"):
                longrepr = (test.get(phase) or {}).get("longrepr") or ((test.get(phase) or {}).get("crash") or {}).get("message")
                if longrepr:
                    error = parse_error(str(longrepr))
                    if error:
                        break
    for coll in doc.get("collectors", []) or []:
        if isinstance(coll, dict) and coll.get("outcome") == "failed":
            outcomes[f"{coll.get('nodeid') or '<collection>'}::<collection>"] = "error"
            if error is None:
                error = parse_error(str(coll.get("longrepr", "")))
    return {"outcomes": outcomes, "error": error, "exitcode": doc.get("exitcode")}


def parse_junit(data: bytes) -> dict[str, Any] | None:
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    outcomes: dict[str, str] = {}
    error = None
    for case in root.iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "?")
        node = f"{cls}::{name}" if cls else name
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                if error is None:
                    error = parse_error((child.text or "") + "\n" + (child.get("message") or ""))
                break
            if child.tag == "skipped":
                outcome = "skipped"
                if child.get("type") == "pytest.xfail":
                    outcome = "passed"
        outcomes[node] = outcome
    return {"outcomes": outcomes, "error": error}


class TestMetrics(MetricProvider):
    metrics = (
        MetricInfo("test_pass_rate", "higher", "passed / collected tests (skips and errors count as not passed)", bound=1.0),
        MetricInfo("tests_passed", "higher", "number of passing tests"),
        MetricInfo("tests_failed", "lower", "number of failing tests"),
        MetricInfo("tests_errors", "lower", "tests with errors, collection errors included"),
        MetricInfo("tests_total", "higher", "number of tests in the report"),
    )

    def measure(self, run: RunContext) -> dict[str, Any]:
        if run.report_kind is None:
            return {}
        if run.report_kind == "judge":
            return self._judged(run)
        parsed = None
        if run.report:
            parsed = parse_json_report(run.report) if run.report_kind == "json" else parse_junit(run.report)
        if parsed is None:  # no report: pytest crashed, was killed, or exited before writing it
            error = parse_error(run.result.stderr + "\n" + run.result.stdout)
            return {"test_pass_rate": 0.0, "tests_passed": 0, "tests_failed": 0, "tests_errors": 1,
                    "tests_total": 0, "test_outcomes": {}, "report": "missing",
                    "error": error or {"type": "NoReport", "message": "the test run produced no report"}}
        return {**self._counts(parsed["outcomes"]), "report": run.report_kind, "error": parsed["error"]}


    def _judged(self, run: RunContext) -> dict[str, Any]:
        parsed = parse_judge_report(run.report, run.report_key or b"", run.result.exit_code)
        values = self._counts(parsed["outcomes"])
        values.update(report="judge", error=parsed["error"], integrity=parsed["integrity"])
        if parsed["integrity"]:
            first = parsed["integrity"][0]
            values.update(test_pass_rate=0.0, report="tampered",
                          error={"type": "IntegrityViolation", "message": f"{first['kind']}: {first['message']}"})
        elif not parsed["complete"]:
            stderr_error = parse_error(run.result.stderr + "\n" + run.result.stdout)
            what = ("the test run ended before the judge finished (os._exit, a crash, a kill or the time limit)"
                    if parsed["started"] else "the test run produced no report")
            values.update(test_pass_rate=0.0, report="incomplete" if parsed["started"] else "missing",
                          error=stderr_error if not parsed["started"] and stderr_error else
                          {"type": "IncompleteReport" if parsed["started"] else "NoReport", "message": what})
            if not parsed["outcomes"]:
                values["tests_errors"] = max(1, values["tests_errors"])
        return values

    @staticmethod
    def _counts(outcomes: Mapping[str, str]) -> dict[str, Any]:
        passed = sum(1 for o in outcomes.values() if o == "passed")
        total = len(outcomes)
        return {"test_pass_rate": passed / total if total else 0.0, "tests_passed": passed,
                "tests_failed": sum(1 for o in outcomes.values() if o == "failed"),
                "tests_errors": sum(1 for o in outcomes.values() if o == "error"),
                "tests_total": total, "test_outcomes": dict(outcomes)}


class ExecMetrics(MetricProvider):
    metrics = (
        MetricInfo("exit_code", "lower", "the command's exit status (-N: killed by signal N)"),
        MetricInfo("command_succeeded", "higher", "1 when the command exited 0 in time, else 0", bound=1.0),
        MetricInfo("execution_time_ms", "lower", "wall time of the command", noisy=True),
        MetricInfo("cpu_time_ms", "lower", "user + system CPU time of the command", noisy=True),
        MetricInfo("peak_memory_mb", "lower", "peak resident memory of the command's largest process", noisy=True),
        MetricInfo("timed_out", "lower", "1 when the wall-time limit killed the command", bound=1.0),
        MetricInfo("oom_killed", "lower", "1 when the memory limit killed the command", bound=1.0),
        MetricInfo("output_bytes", "lower", "bytes printed on stdout and stderr"),
    )

    def measure(self, run: RunContext) -> dict[str, Any]:
        r = run.result
        values: dict[str, Any] = {
            "exit_code": r.exit_code, "command_succeeded": 1.0 if r.ok else 0.0,
            "execution_time_ms": r.wall_ms, "cpu_time_ms": r.cpu_ms, "peak_memory_mb": r.peak_memory_mb,
            "timed_out": 1.0 if r.timed_out else 0.0, "oom_killed": 1.0 if r.oom_killed else 0.0,
            "output_bytes": len(r.stdout.encode()) + len(r.stderr.encode()),
        }
        if run.report_kind is None and not r.ok:
            values["error"] = parse_error(r.stderr) or {"type": "ExitStatus", "message": f"exit code {r.exit_code}"}
        return values


@hookimpl
def agentenv_add_metrics(registry) -> None:
    registry.add_metrics(TestMetrics())
    registry.add_metrics(ExecMetrics())
