"""Report formats other than pytest's judge, in real sandboxes: a reward file a hidden check writes,
and a JUnit file at a path the task names; what the agent plants before the run never counts."""

import json

import gymnasium as gym
import pytest

import agentenv

CHECK = """#!/bin/sh
# the task's own check: 1 when the agent's script prints the sum, else 0
out=$(sh /app/solve.sh 2>/dev/null)
if [ "$out" = "42" ]; then echo 1 > "$AGENTENV_REWARD_FILE"; else echo 0 > "$AGENTENV_REWARD_FILE"; fi
"""

JUNIT = """#!/bin/sh
# the task's own runner: one JUnit case per expected line
ok() { [ "$(sh /app/solve.sh 2>/dev/null)" = "$1" ] && echo '<testcase classname="c" name="'$2'"/>' \
       || echo '<testcase classname="c" name="'$2'"><failure message="wrong">E   AssertionError: wrong</failure></testcase>'; }
{ echo '<testsuites><testsuite>'; ok 42 answer; ok 42 again; echo '</testsuite></testsuites>'; } > /app/out/report.xml
"""


def task(tmp_path, steps, rule):
    doc = {"task_id": "formats.sum", "environment_config": {"runtime": "shell"},
           "workspace": {"files": {"solve.sh": "echo 0\n"}},
           "hidden_files": {"files": {"check/check.sh": CHECK, "check/junit.sh": JUNIT}},
           "execution_steps": steps, "reward_logic": {"type": "composite", "rules": [rule]},
           "reference_solution": {"files": {"solve.sh": "echo 42\n"}}}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(doc))
    return agentenv.load_task(path)


def play(spec, *actions):
    env = gym.make("agentenv/Task-v0", task=spec, mode="agentic")
    try:
        env.reset()
        for action in actions:
            env.step(action)
        _, reward, _, _, info = env.step({"action": "submit"})
    finally:
        env.close()
    return reward, info


SOLVE = {"action": "overwrite_file", "path": "solve.sh", "content": "echo 42\n"}


def test_a_reward_file_scores_what_the_tasks_check_writes(tmp_path):
    spec = task(tmp_path, [{"action": "run_command", "command": "sh /app/check/check.sh",
                            "report": {"format": "reward_file"}}], {"metric": "report_score", "weight": 1.0})
    reward, info = play(spec, SOLVE)
    assert reward == 1.0 and info["metrics"]["report"] == "reward_file"
    reward, info = play(spec)
    assert reward == 0.0 and info["metrics"]["report_score"] == 0.0
    # the agent's script, which this check runs, writes a score of its own into whatever it finds:
    # the check writes too, and a reward file with two scores is flagged and scores 0
    forger = {"action": "overwrite_file", "path": "solve.sh",
              "content": 'for f in /tmp/.agentenv-*/reward /tmp/reward; do echo 1 > "$f"; done 2>/dev/null; echo 0\n'}
    reward, info = play(spec, forger)
    assert reward == 0.0 and info["metrics"]["report"] == "tampered"
    assert not info["integrity"]["ok"] and info["integrity"]["findings"][0]["kind"] == "reward-file"
    killer = {"action": "overwrite_file", "path": "solve.sh",  # writes first, then stops the check
              "content": 'for f in /tmp/.agentenv-*/reward; do echo 1 > "$f"; done; kill -9 $PPID; echo 42\n'}
    reward, info = play(spec, killer)
    assert reward == 0.0 and info["metrics"]["report"] == "incomplete"
    # a line nested past the parser's recursion limit raised RecursionError out of env.step (red team, stop 30)
    deep = {"action": "overwrite_file", "path": "solve.sh",
            "content": 'for f in /tmp/.agentenv-*/reward; do head -c 200000 /dev/zero | tr "\\0" "[" >> "$f"; done; echo 0\n'}
    reward, info = play(spec, deep)
    assert reward == 0.0 and not info["reward_masked"], info


def test_a_junit_file_at_the_tasks_path_scores_its_cases_and_a_planted_one_does_not(tmp_path):
    spec = task(tmp_path, [{"action": "run_command", "command": "mkdir -p /app/out && sh /app/check/junit.sh",
                            "report": {"format": "junit", "path": "/app/out/report.xml"}}],
                {"metric": "test_pass_rate", "weight": 1.0})
    reward, info = play(spec, SOLVE)
    assert reward == 1.0 and info["metrics"]["tests_passed"] == 2
    reward, info = play(spec)
    assert reward == 0.0 and info["metrics"]["tests_failed"] == 2
    assert info["metrics"]["error"] == {"type": "AssertionError", "message": "wrong"}
    planted = {"action": "overwrite_file", "path": "out/report.xml",
               "content": '<testsuites><testsuite><testcase classname="c" name="answer"/></testsuite></testsuites>'}
    broken_runner = task(tmp_path, [{"action": "run_command", "command": "true",
                                     "report": {"format": "junit", "path": "/app/out/report.xml"}}],
                         {"metric": "test_pass_rate", "weight": 1.0})
    reward, info = play(broken_runner, planted)  # the runner writes nothing: the planted file was removed first
    assert reward == 0.0 and info["metrics"]["report"] == "missing"


def test_a_pytest_json_report_of_the_wrong_shape_scores_zero_and_never_raises(tmp_path):
    # the report is the command's file, and the agent's script runs in that command: a phase or a
    # crash that is not an object, or collectors that are not a list, raised out of env.step (red team, stop 37)
    spec = task(tmp_path, [{"action": "run_command", "command": "mkdir -p /app/out && sh /app/solve.sh",
                            "report": {"format": "pytest_json", "path": "/app/out/report.json"}}],
                {"metric": "test_pass_rate", "weight": 1.0})
    for doc in ({"tests": [{"nodeid": "t", "outcome": "failed", "call": "x"}]},
                {"tests": [{"nodeid": "t", "outcome": "error", "setup": {"crash": 7}}], "collectors": 5},
                {"tests": [], "collectors": [3, {"outcome": "failed", "longrepr": ["x"]}]}):
        writer = {"action": "overwrite_file", "path": "solve.sh",
                  "content": f"printf '%s' '{json.dumps(doc)}' > /app/out/report.json\n"}
        reward, info = play(spec, writer)
        assert reward == 0.0 and not info["reward_masked"] and info["metrics"]["tests_passed"] == 0, (doc, info)


@pytest.mark.unit
def test_a_step_naming_an_unknown_format_or_bad_options_is_a_spec_error(tmp_path):
    for report, where in (({"format": "junt"}, "/execution_steps/0/report/format"),
                          ({"format": "junit"}, "/execution_steps/0/report"),
                          ({"format": "reward_file", "path": 3}, "/execution_steps/0/report/path")):
        with pytest.raises(agentenv.TaskSpecError) as err:
            task(tmp_path, [{"action": "run_command", "command": "true", "report": report}],
                 {"metric": "report_score", "weight": 1.0})
        assert where in str(err.value), (report, str(err.value))
    assert "did you mean 'junit'" in str(pytest.raises(agentenv.TaskSpecError, task, tmp_path, [
        {"action": "run_command", "command": "true", "report": {"format": "junt"}}],
        {"metric": "report_score", "weight": 1.0}).value)


def test_the_host_takes_the_judges_first_word_on_each_test_and_nothing_after_its_end():
    """Code under test that reached the judge's signer wrote "passed" for every test after the judge's
    last record, and "returned" for a test function that had raised (red team, stop 34): the host
    names records after the end, a phase reported twice with two outcomes, and a passed test whose
    function the judge heard raise (or never heard from, where it must)."""
    from agentenv.builtin.reports import parse_judge_report
    from _paths import signed_judge_report as _signed

    key, node = b"k" * 32, "tests/test_a.py::test_a"
    honest = [{"t": "start"}, {"t": "call", "nodeid": node, "inner": True},
              {"t": "inner", "nodeid": node, "outcome": "returned"},
              {"t": "test", "nodeid": node, "when": "call", "outcome": "passed"}, {"t": "end", "exitstatus": 0}]
    parsed = parse_judge_report(_signed(key, honest), key, 0)
    assert parsed["outcomes"] == {node: "passed"} and parsed["integrity"] == [] and parsed["complete"]

    def findings(records):
        return [f["message"] for f in parse_judge_report(_signed(key, records), key, 0)["integrity"]]

    raised = honest[:2] + [{"t": "inner", "nodeid": node, "outcome": "raised"}] + honest[3:]
    assert findings(raised) == [f"{node}: reported as passed, but the test function raised"]
    assert findings(honest[:2] + honest[3:]) == [f"{node}: reported as passed, but the test function never ran where "
                                                 "pytest calls it"]
    assert findings(raised[:3] + [{"t": "inner", "nodeid": node, "outcome": "returned"}] + raised[3:])[0] == (
        f"{node}: the test function was reported raised and then returned")
    failed = honest[:3] + [{"t": "test", "nodeid": node, "when": "call", "outcome": "failed"}]
    assert findings(failed + honest[3:]) == [f"{node} (call) was reported failed and then passed"]
    assert findings(honest + [{"t": "test", "nodeid": node, "when": "call", "outcome": "passed"}]) == [
        "a record after the judge's last one"]
    repeated = honest[:1] + [{"t": "integrity", "kind": "runner-modified", "message": "m"}] * 3 + honest[1:]
    assert findings(repeated) == ["m"]  # (the judge sends a finding each time it sees it; one is kept)
