"""Report formats and test metrics: the pytest judge's report, JUnit XML, pytest-json-report and
reward files; crashes, forgeries and collection errors score 0."""

import json
import os

import pytest

import agentenv
from agentenv import ExecResult, RunContext, RuntimeEnv, ScoredCommand, ScoringContext
from agentenv.builtin.metrics import TestMetrics
from _paths import signed_judge_report as _signed
from agentenv.builtin.reports import (NO_BYTECODE_CACHE, JUnitFormat, PytestFormat, PytestJsonFormat, RewardFileFormat,
                                      parse_error)

pytestmark = pytest.mark.unit

PROVIDER = TestMetrics()
FORMATS = {"json": PytestJsonFormat(), "junit": JUnitFormat()}


def run(kind, report, stderr=""):
    fmt = FORMATS[kind]
    result = ExecResult("pytest", 1, "", stderr)
    parsed = fmt.parse(ScoredCommand("pytest", "/app/report"), result, report)
    return PROVIDER.measure(RunContext("pytest", result, parsed))


def judged(key, report, exit_code, scored_key=None):
    result = ExecResult("pytest", exit_code, "", "")
    parsed = PytestFormat().parse(ScoredCommand("pytest", "/tmp/r", state=scored_key or key), result, report)
    return PROVIDER.measure(RunContext("pytest", result, parsed))


def context(nonce, files=None, pipes=True, **options):
    return ScoringContext(nonce, "/app", files or {}, [], pipes, RuntimeEnv("python3"), options)


def test_scored_command_runs_pytest_under_the_trusted_judge():
    cmd = PytestFormat().instrument("pytest /app/tests/ --json-report", context("abc"))
    assert cmd.report_path == "/tmp/.agentenv-abc/report" and cmd.pipe
    assert cmd.command == "pytest -p agentenv_judge_abc -c /app/.agentenv-abc-pytest.ini --rootdir=/app /app/tests/"
    assert cmd.env["PYTHONSAFEPATH"] == "1" and cmd.env["PYTEST_ADDOPTS"] == "" and len(cmd.state) == 32
    assert set(cmd.files) == {"/tmp/.agentenv-abc/agentenv_judge_abc.py", "/tmp/.agentenv-abc/judge_core.py",
                              "/tmp/.agentenv-abc/judge.key",
                              "/tmp/.agentenv-abc/judge.json", "/app/.agentenv-abc-pytest.ini"}
    assert json.loads(cmd.files["/tmp/.agentenv-abc/judge.json"])["prepend_cwd"] is False
    # a runtime without a bytecode cache gets none, never one under a folder code under test can write
    assert cmd.env["PYTHONPYCACHEPREFIX"] == NO_BYTECODE_CACHE and not os.path.exists(NO_BYTECODE_CACHE)
    with pytest.raises(OSError):
        os.makedirs(NO_BYTECODE_CACHE)
    cmd = PytestFormat().instrument("cd /app && python -m pytest -q tests --junitxml=x.xml",
                                    context("x", {"pyproject.toml": b"[tool.pytest.ini_options]\naddopts = -q\n"}))
    assert cmd.command.startswith("cd /app && python -m pytest -p agentenv_judge_x -c /app/.agentenv-x-pyproject.toml")
    assert "x.xml" not in cmd.command and cmd.files["/app/.agentenv-x-pyproject.toml"].startswith(b"[tool.pytest")
    assert json.loads(cmd.files["/tmp/.agentenv-x/judge.json"])["prepend_cwd"] is True


def test_the_xfail_listing_takes_every_marked_test_of_the_commands_paths():
    """The trusted listing of the task's xfail marks replaces the command's own ``-m`` (else
    ``-m "not slow"`` would list every test as marked) and keeps what follows in the shell line."""
    fmt = PytestFormat()
    assert fmt.collect_command("cd /app && python -m pytest -q tests -m 'not slow' --tb=short; echo done", "xfail") == (
        "cd /app && python -m pytest --collect-only -m xfail -q tests  --tb=short; echo done")
    assert fmt.collect_command("pytest -m=smoke tests && true", "xfail") == "pytest --collect-only -q -m xfail  tests && true"
    assert fmt.collect_command("pytest tests -m 'a or b'") == "pytest --collect-only -q tests -m 'a or b'"


def test_the_registry_picks_pytest_by_itself_and_nothing_for_other_commands():
    reg = agentenv.registry()
    for command in ("pytest -q", "cd /app && python -m pytest tests", "/venv/bin/py.test x", "python3.11 -m pytest"):
        assert reg.report_format_for(command).name == "pytest", command
    for command in ("bash run.sh", "python main.py", "echo pytest-like", "mypytest"):
        assert reg.report_format_for(command) is None, command
    assert {"pytest", "junit", "pytest_json", "reward_file"} <= set(reg.report_formats)
    with pytest.raises(agentenv.UnknownNameError, match="did you mean 'junit'"):
        reg.report_format("junitt")


def test_a_judge_report_counts_only_lines_with_the_runs_key():
    key = b"k" * 32
    records = [{"t": "start"}, {"t": "test", "nodeid": "t.py::a", "when": "setup", "outcome": "passed"},
               {"t": "test", "nodeid": "t.py::a", "when": "call", "outcome": "passed"},
               {"t": "test", "nodeid": "t.py::b", "when": "call", "outcome": "failed", "longrepr": "E   assert 1 == 2"},
               {"t": "end", "exitstatus": 1}]
    m = judged(key, _signed(key, records), 1)
    assert (m["tests_passed"], m["tests_failed"], m["test_pass_rate"], m["integrity"]) == (1, 1, 0.5, [])
    assert m["report"] == "pytest" and m["report_score"] == 0.5
    forged = _signed(b"x" * 32, records)
    m = judged(key, forged, 0)
    assert m["test_pass_rate"] == 0.0 and m["integrity"][0]["kind"] == "report-forged"
    assert m["report"] == "tampered" and m["report_score"] == 0.0
    early = _signed(key, records[:3])  # no "end": the process left before pytest finished
    m = judged(key, early, 0)
    assert m["test_pass_rate"] == 0.0 and m["error"]["type"] == "IncompleteReport"
    lied = _signed(key, records[:3] + [{"t": "end", "exitstatus": 0}])
    m = judged(key, lied, 1)
    assert m["test_pass_rate"] == 0.0 and m["integrity"][0]["kind"] == "exit-status"
    m = judged(key, None, 2)  # a usage error: no report at all
    assert m["test_pass_rate"] == 0.0 and m["report"] == "missing" and m["tests_errors"] == 1


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
    assert parse_error("E   ValueError: bad thing  \nmore") == {"type": "ValueError", "message": "bad thing"}
    assert parse_error("x\nE       assert 1 == 2   \n") == {"type": "AssertionError", "message": "assert 1 == 2"}


def test_a_transcript_of_long_lines_and_words_is_read_in_one_pass():
    """A test's output is the agent's to write: the host reads it in time linear in its length (a
    lazy ``.*?`` before ``\\s*$``, and a pattern that began with ``[^\\s'"]*``, tried every split of a
    long run: 20,000 spaces or 60,000 characters without one held ``env.step()`` for seconds to
    minutes, red team, stop 36). Sizes where the old patterns took many minutes."""
    from agentenv._scoring import _hide_words_with

    spaces = "E   assert " + " " * 300_000 + "x\n"
    assert parse_error(spaces)["type"] == "AssertionError"
    nonce = "0f1e2d3c4b5a6978"
    word = "x" * 300_000 + f" /tmp/.agentenv-{nonce}/judge.py:7: 'agentenv_judge_{nonce}.py'" + " y" * 10
    assert _hide_words_with(nonce, word) == "x" * 300_000 + " <judge> '<judge>'" + " y" * 10
    assert _hide_words_with(nonce, "q" * 300_000 + nonce) == "<judge>"
    assert _hide_words_with(nonce, "no judge here") == "no judge here"


def test_a_reward_file_gives_a_score_in_0_1_and_nothing_else():
    fmt = RewardFileFormat()
    cmd = fmt.instrument("bash /app/tests/test.sh", context("n1"))
    assert cmd.env["AGENTENV_REWARD_FILE"] == cmd.report_path == "/tmp/.agentenv-n1/reward" and cmd.pipe
    fixed = fmt.instrument("bash check.sh", context("n2", path="/app/out/reward.txt"))
    assert fixed.report_path == "/app/out/reward.txt" and not fixed.pipe  # a fixed path is a plain file
    result = ExecResult("bash check.sh", 0, "", "")
    for data, score in ((b"1\n", 1.0), (b"0.25", 0.25), (b'{"reward": 0.5}', 0.5), (b"0", 0.0)):
        m = PROVIDER.measure(RunContext("c", result, fmt.parse(cmd, result, data)))
        assert m["report_score"] == score and "test_pass_rate" not in m, data
    for data in (None, b"", b"1.5", b"-0.1", b"nan", b"NaN", b"passed", b'{"reward": "1"}', b"\xff", b"true"):
        m = PROVIDER.measure(RunContext("c", result, fmt.parse(cmd, result, data)))
        assert m["report_score"] == 0.0 and m["report"] == "missing", data
    # a second writer (code the check ran) spoils the file, and is flagged
    m = PROVIDER.measure(RunContext("c", result, fmt.parse(cmd, result, b"1\n0\n")))
    assert m["report_score"] == 0.0 and m["report"] == "tampered" and m["integrity"][0]["kind"] == "reward-file"
    # a check that did not exit 0 (killed, say, after something else wrote "1") counts for nothing
    for failed in (ExecResult("c", -9, "", ""), ExecResult("c", 1, "", ""), ExecResult("c", 0, "", "", timed_out=True)):
        m = PROVIDER.measure(RunContext("c", failed, fmt.parse(cmd, failed, b"1\n")))
        assert m["report_score"] == 0.0 and m["report"] == "incomplete", failed


def test_the_hosts_reading_of_a_reply_and_of_a_solution_file_is_bounded():
    """A chat reply of 199 nested ``{"k":`` before an unclosed list of a million characters had the
    JSON parser read to its end from every start (15 s of host CPU a reply), and
    ``reference_similarity`` matched an 8 MB solution file against the reference character by
    character (minutes; red team, stop 36). Both now read a bounded amount, and give what they
    gave on ordinary input."""
    from types import SimpleNamespace

    from agentenv._chat import _json_objects
    from agentenv.builtin.reward_models import ReferenceSimilarity

    assert _json_objects('{"k":' * 199 + "[" + "0," * 500_000) == []
    assert _json_objects('x {"a": 1} y {"b": {"c": 2}} z') == [{"a": 1}, {"b": {"c": 2}}, {"c": 2}]
    model = ReferenceSimilarity()

    def score(ref, got):
        return model.score(SimpleNamespace(reference={"f.py": ref}, files={"f.py": got}), {})

    assert round(score(b"def f():\n    return 1\n", b"def f():\n    return 2\n"), 4) == 0.9545
    assert score(b"", b"") == 1.0 and score(b"abc", b"") == 0.0
    assert 0.0 <= score(b"def f():\n    return 1\n" * 20, b" " * 8_000_000) < 0.01
