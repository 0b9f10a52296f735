"""Report parsing: pytest JSON report and JUnit XML, crashes and collection errors score 0."""

from agentenv import ExecResult, RunContext
from agentenv.builtin.metrics import TestMetrics, parse_error, scored_command

PROVIDER = TestMetrics()


def run(kind, report, stderr=""):
    return PROVIDER.measure(RunContext("pytest", ExecResult("pytest", 1, "", stderr), kind, report))


def test_scored_command_adds_unguessable_report_paths():
    cmd, kind, path = scored_command("pytest /app/tests/ --json-report", "abc")
    assert kind == "json" and path == "/tmp/.agentenv-report-abc.json"
    assert cmd == "pytest --json-report-file=/tmp/.agentenv-report-abc.json /app/tests/ --json-report"
    cmd, kind, path = scored_command("cd /app && python -m pytest -q tests", "x")
    assert kind == "junit" and "--junitxml=/tmp/.agentenv-report-x.xml" in cmd and cmd.startswith("cd /app && python -m pytest --junitxml")
    cmd, kind, path = scored_command("pytest --json-report --json-report-file=.report.json", "n")
    assert ".report.json" not in cmd and path.endswith("n.json")
    assert scored_command("bash run.sh", "n") == ("bash run.sh", None, None)


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
