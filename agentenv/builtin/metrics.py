"""Built-in metrics: test outcomes (pytest JSON report or JUnit XML) and execution measurements.

For a scored command that runs pytest, the environment asks pytest for a report at a fresh,
unguessable path in the sandbox's /tmp (``--json-report-file`` when the command asks for
``--json-report``, ``--junitxml`` otherwise) and reads it back; nothing the program prints is
trusted. A missing or unparsable report (a crash, a collection error, ``sys.exit`` at import)
yields a pass rate of 0, never an exception.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from .. import hookimpl
from .._extension import MetricInfo, MetricProvider, RunContext

_PYTEST = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))((?:\S*/)?(?:py\.test|pytest)|(?:\S*/)?python[\d.]*\s+(?:-\S+\s+)*?-m\s+pytest)(?=\s|$)")
_JSON_FILE = re.compile(r"--json-report-file[= ](\S+)")
_JUNIT_FILE = re.compile(r"--junit-?xml[= ](\S+)")


def scored_command(command: str, nonce: str) -> tuple[str, str | None, str | None]:
    """(command to run, report kind, report path in the sandbox) for a scored run."""
    m = _PYTEST.search(command)
    if not m:
        return command, None, None
    insert = m.end(1)
    if "--json-report" in command:
        path = f"/tmp/.agentenv-report-{nonce}.json"
        command = _JSON_FILE.sub("", command)
        return command[:insert] + f" --json-report-file={path}" + command[insert:], "json", path
    path = f"/tmp/.agentenv-report-{nonce}.xml"
    command = _JUNIT_FILE.sub("", command)
    return command[:insert] + f" --junitxml={path} -o junit_family=xunit2" + command[insert:], "junit", path


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
        parsed = None
        if run.report:
            parsed = parse_json_report(run.report) if run.report_kind == "json" else parse_junit(run.report)
        if parsed is None:  # no report: pytest crashed, was killed, or exited before writing it
            error = parse_error(run.result.stderr + "\n" + run.result.stdout)
            return {"test_pass_rate": 0.0, "tests_passed": 0, "tests_failed": 0, "tests_errors": 1,
                    "tests_total": 0, "test_outcomes": {}, "report": "missing",
                    "error": error or {"type": "NoReport", "message": "the test run produced no report"}}
        outcomes = parsed["outcomes"]
        passed = sum(1 for o in outcomes.values() if o == "passed")
        failed = sum(1 for o in outcomes.values() if o == "failed")
        errors = sum(1 for o in outcomes.values() if o == "error")
        total = len(outcomes)
        return {"test_pass_rate": passed / total if total else 0.0, "tests_passed": passed, "tests_failed": failed,
                "tests_errors": errors, "tests_total": total, "test_outcomes": outcomes,
                "report": run.report_kind, "error": parsed["error"]}


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
