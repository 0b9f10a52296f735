"""Report parsing: pytest JSON report and JUnit XML, crashes and collection errors score 0."""

import hashlib
import hmac
import json

from agentenv import ExecResult, RunContext
from agentenv.builtin.metrics import TestMetrics, parse_error, scored_command

PROVIDER = TestMetrics()


def run(kind, report, stderr=""):
    return PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 1, "", stderr), kind, report))


def test_scored_command_runs_pytest_under_the_trusted_judge():
    cmd = scored_command("pytest /app/tests/ --json-report", "abc", task_files={})
    assert cmd.kind == "judge" and cmd.report_path == "/tmp/.agentenv-abc/report"
    assert cmd.command == "pytest -p agentenv_judge_abc -c /app/.agentenv-abc-pytest.ini --rootdir=/app /app/tests/"
    assert cmd.env["PYTHONSAFEPATH"] == "1" and cmd.env["PYTEST_ADDOPTS"] == "" and len(cmd.key) == 32
    assert set(cmd.files) == {"/tmp/.agentenv-abc/agentenv_judge_abc.py", "/tmp/.agentenv-abc/judge.key",
                              "/tmp/.agentenv-abc/judge.json", "/app/.agentenv-abc-pytest.ini"}
    assert json.loads(cmd.files["/tmp/.agentenv-abc/judge.json"])["prepend_cwd"] is False
    cmd = scored_command("cd /app && python -m pytest -q tests --junitxml=x.xml", "x",
                         task_files={"pyproject.toml": b"[tool.pytest.ini_options]\naddopts = -q\n"})
    assert cmd.command.startswith("cd /app && python -m pytest -p agentenv_judge_x -c /app/.agentenv-x-pyproject.toml")
    assert "x.xml" not in cmd.command and cmd.files["/app/.agentenv-x-pyproject.toml"].startswith(b"[tool.pytest")
    assert json.loads(cmd.files["/tmp/.agentenv-x/judge.json"])["prepend_cwd"] is True
    assert scored_command("bash run.sh", "n").kind is None


def _signed(key, records):
    lines = []
    for seq, rec in enumerate(records, start=1):
        text = json.dumps(rec).encode()
        lines.append(text + b"\t" + hmac.new(key, str(seq).encode() + b":" + text, hashlib.sha256).hexdigest().encode())
    return b"\n".join(lines) + b"\n"


def test_a_judge_report_counts_only_lines_with_the_runs_key():
    key = b"k" * 32
    records = [{"t": "start"}, {"t": "test", "nodeid": "t.py::a", "when": "setup", "outcome": "passed"},
               {"t": "test", "nodeid": "t.py::a", "when": "call", "outcome": "passed"},
               {"t": "test", "nodeid": "t.py::b", "when": "call", "outcome": "failed", "longrepr": "E   assert 1 == 2"},
               {"t": "end", "exitstatus": 1}]
    m = PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 1, "", ""), "judge", _signed(key, records), key))
    assert (m["tests_passed"], m["tests_failed"], m["test_pass_rate"], m["integrity"]) == (1, 1, 0.5, [])
    forged = _signed(b"x" * 32, records)
    m = PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 0, "", ""), "judge", forged, key))
    assert m["test_pass_rate"] == 0.0 and m["integrity"][0]["kind"] == "report-forged"
    early = _signed(key, records[:3])  # no "end": the process left before pytest finished
    m = PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 0, "", ""), "judge", early, key))
    assert m["test_pass_rate"] == 0.0 and m["error"]["type"] == "IncompleteReport"
    lied = _signed(key, records[:3] + [{"t": "end", "exitstatus": 0}])
    m = PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 1, "", ""), "judge", lied, key))
    assert m["test_pass_rate"] == 0.0 and m["integrity"][0]["kind"] == "exit-status"


def test_json_report_outcomes_and_first_error():
    report = b'''{"exitcode": 1, "tests": [
      {"nodeid": "t.py::a", "outcome": "passed"},
      {"nodeid": "t.py::b", "outcome": "failed", "call": {"longrepr": "def test_b():\\n>   assert f(1) == 2\\nE   assert 3 == 2\\n"}},
      {"nodeid": "t.py::c", "outcome": "skipped"},
      {"nodeid": "t.py::d", "outcome": "xfailed"}]}'''
    m = run("json", report)
    assert m["tests_total"] == 4 and m["tests_passed"] == 2 and m["tests_failed"] == 1
    assert m["test_pass_rate"] == 0.5
    assert m["test_outcomes"]["t.py::b"] == "failed"
    assert m["error"] == {"type": "AssertionError", "message": "assert 3 == 2"}


def test_json_report_collection_error_counts_as_error():
    report = b'''{"exitcode": 2, "tests": [], "collectors": [{"nodeid": "tests/test_x.py", "outcome": "failed",
      "longrepr": "ImportError while importing test module\\nE   ModuleNotFoundError: No module named 'pkg'"}]}'''
    m = run("json", report)
    assert m["test_pass_rate"] == 0.0 and m["tests_errors"] == 1
    assert m["error"]["type"] == "ModuleNotFoundError"


def test_junit_outcomes():
    xml = b'''<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3">
      <testcase classname="tests.test_a" name="test_ok" time="0.01"/>
      <testcase classname="tests.test_a" name="test_bad"><failure message="ValueError: boom">Traceback...
E   ValueError: boom</failure></testcase>
      <testcase classname="tests.test_a" name="test_err"><error message="fixture failed">E   KeyError: 'x'</error></testcase>
    </testsuite></testsuites>'''
    m = run("junit", xml)
    assert (m["tests_passed"], m["tests_failed"], m["tests_errors"], m["tests_total"]) == (1, 1, 1, 3)
    assert abs(m["test_pass_rate"] - 1 / 3) < 1e-9
    assert m["error"] == {"type": "ValueError", "message": "boom"}


def test_missing_or_garbage_report_scores_zero_without_raising():
    for kind in ("json", "junit"):
        for report in (None, b"", b"not a report", b"\xff\xfe", b"[1, 2]", b"<a><testcase"):
            m = run(kind, report, stderr="Traceback (most recent call last):\nSystemExit: 0")
            assert m["test_pass_rate"] == 0.0 and m["tests_total"] == 0


def test_parse_error_of_a_traceback():
    tb = 'Traceback (most recent call last):\n  File "x.py", line 1\nZeroDivisionError: division by zero\n'
    assert parse_error(tb) == {"type": "ZeroDivisionError", "message": "division by zero"}
    assert parse_error("all good") is None
