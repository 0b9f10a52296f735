"""agentenv-quality: the metrics on files (ruff, radon, shellcheck, untrusted content) and on real
episodes (RunContext.files filled by the environment, rules that name the metrics)."""

from __future__ import annotations

import json
import os
import shutil

import gymnasium as gym
import pytest
import radon.metrics

import agentenv
from agentenv._cli import main
from agentenv_quality import (MAX_FILE_BYTES, MAX_FILES, TOO_LARGE, TOO_MANY_FILES, UNANALYSABLE, analyse, complexity,
                              maintainability, tools)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(REPO, "tasks", "examples")
NEEDS_SHELLCHECK = pytest.mark.skipif(shutil.which("shellcheck") is None,
                                      reason="shellcheck is not installed (apt-get install shellcheck)")

SLOPPY = b"import os\ndef f(l):\n    x=1;y=2  # noqa\n    if l: return x\n"
TIDY = b'def add(first, second):\n    """The sum."""\n    return first + second\n'
BRANCHY = b"".join([b"def pick(n):\n"] + [b"    if n == %d:\n        return %d\n" % (i, i) for i in range(12)]
                   + [b"    return -1\n"])


# ------------------------------------------------------------------ the tools on files

def test_lint_counts_ruff_findings_and_no_comment_or_config_silences_them():
    report = analyse({"sloppy.py": SLOPPY})
    assert report.lint_rules == {"E701": 1, "E702": 1, "E741": 1, "F401": 1, "F841": 1, "RET503": 1}
    silenced = SLOPPY.replace(b"import os\n", b"# ruff: noqa\nimport os  # noqa: F401\n")
    configs = {"ruff.toml": b'[lint]\nignore = ["ALL"]\n', "pyproject.toml": b'[tool.ruff]\nexclude = ["*"]\n'}
    again = analyse({"sloppy.py": silenced, **configs})
    assert again.lint_findings == report.lint_findings == 6
    assert analyse({"tidy.py": TIDY}).lint_findings == 0


def test_comments_cannot_raise_the_maintainability_index():
    padded = BRANCHY + b"".join(b"# this function is wonderfully maintainable, line %d\n" % i for i in range(300))
    ours = analyse({"m.py": padded}).maintainability_index
    assert ours == analyse({"m.py": BRANCHY}).maintainability_index
    assert radon.metrics.mi_visit(padded.decode(), True) > ours + 10  # radon's default would have paid for them


def test_the_worst_file_counts_so_a_tidy_extra_file_changes_nothing():
    alone = analyse({"branchy.py": BRANCHY})
    assert alone.cyclomatic_complexity == 13
    padded = analyse({"branchy.py": BRANCHY, **{f"extra{i}.py": TIDY for i in range(5)}})
    assert (padded.cyclomatic_complexity, padded.maintainability_index) == (13, alone.maintainability_index)
    assert analyse({"tidy.py": TIDY}).maintainability_index > alone.maintainability_index


def test_module_level_code_is_measured_too():
    flat = b"n = 3\n" + b"".join(b"if n == %d:\n    print(%d)\n" % (i, i) for i in range(8))
    assert analyse({"flat.py": flat}).cyclomatic_complexity == 9


def test_files_that_do_not_parse_or_are_too_large_score_worst():
    broken = analyse({"ok.py": TIDY, "broken.py": b"def f(:\n    return\n"})
    assert broken.maintainability_index == 0.0 and broken.lint_rules.get("invalid-syntax", 0) >= 1
    huge = analyse({"huge.py": b"x = 1\n" * (MAX_FILE_BYTES // 6 + 1)})
    assert huge.lint_rules == {TOO_LARGE: MAX_FILE_BYTES // 6 + 1} and huge.maintainability_index == 0.0
    # a file crafted to crash ruff (it overflows its stack) is the agent's doing: a finding, never a masked episode
    deep = analyse({"deep.py": b"x = " + b"-" * 100_000 + b"1\n", "nul.py": b"x = 1\x00\n", "tidy.py": TIDY})
    assert deep.maintainability_index == 0.0 and deep.lint_rules[UNANALYSABLE] == 1 and deep.lint_findings >= 2
    assert maintainability("") == 100.0


def test_a_file_python_cannot_read_as_text_scores_worst_and_is_never_masked():
    # UTF-7 that decodes to a lone surrogate: Python refuses to compile it; re-encoding it for ruff
    # raised, and the episode was masked as a failing metric plugin
    for source in (b"# coding: utf-7\nx = 1\n+2AA-\n", b"# coding: utf-7\nx = '+2AA-'\n",
                   b"# coding: no-such-codec\nx = 1\n"):
        report = analyse({"notes.py": source, "tidy.py": TIDY})
        lines = sum(1 for line in source.splitlines() if line.strip())
        assert report.lint_rules == {UNANALYSABLE: lines} and report.maintainability_index == 0.0, source
    env = gym.make("agentenv/examples.fizzbuzz-v0", metrics="all")
    try:
        env.reset()
        _, reward, _, _, info = env.step("# coding: utf-7\n+2AA-\n")
        assert (reward, info["reward_masked"], info["metrics"]["lint_rules"]) == (0.0, False, {UNANALYSABLE: 2})
    finally:
        env.close()


def test_files_past_the_file_bound_push_no_code_out_and_still_count():
    messy = SLOPPY + BRANCHY
    alone = analyse({"messy.py": messy})
    assert (alone.lint_findings, alone.cyclomatic_complexity) == (6, 13)
    # empty files whose paths sort first cannot push the real file out of the analysed set
    fillers = analyse({"messy.py": messy, **{f"0/{i:03}.py": b"" for i in range(MAX_FILES)}})
    assert fillers.lint_rules == {**alone.lint_rules, TOO_MANY_FILES: 1}
    assert (fillers.cyclomatic_complexity, fillers.maintainability_index) == (13, 0.0)
    # pushed out by larger files, it counts a finding per line and its complexity bound: no better than measured
    larger = TIDY + b"#" * len(messy) + b"\n"
    pushed = analyse({"messy.py": messy, **{f"0/{i:03}.py": larger for i in range(MAX_FILES)}})
    assert pushed.lint_rules == {TOO_MANY_FILES: messy.count(b"\n")} and pushed.lint_findings > alone.lint_findings
    assert (pushed.cyclomatic_complexity, pushed.maintainability_index) == (1 + messy.count(b"if "), 0.0) == (14, 0.0)


def test_a_file_that_crashes_ruff_counts_a_finding_per_line():
    sloppy = analyse({"sloppy.py": SLOPPY})
    crashing = b"from __future__ import annotations\n" + SLOPPY + b'v: "' + b"-" * 20_000 + b'1" = 0\n'
    crashed = analyse({"sloppy.py": crashing})
    assert crashed.lint_rules == {UNANALYSABLE: 6} and crashed.lint_findings >= sloppy.lint_findings
    assert crashed.cyclomatic_complexity == sloppy.cyclomatic_complexity  # radon still reads it


def test_a_file_radon_cannot_measure_counts_its_complexity_bound():
    deep = BRANCHY + b"\n\ndef _unused():\n    return " + b"~" * 600 + b"1\n"
    report = analyse({"branchy.py": deep, "tidy.py": TIDY})
    assert (report.cyclomatic_complexity, report.maintainability_index) == (13, 0.0)
    assert analyse({"broken.py": BRANCHY + b"def f(:\n"}).cyclomatic_complexity == 13  # as for code that does not parse
    # the bound is never below radon's measure
    sources = sorted(os.path.join(root, name) for top in (os.path.join(REPO, "plugins"), EXAMPLES)
                     for root, _, names in os.walk(top) for name in names if name.endswith(".py"))
    assert len(sources) > 20
    for path in sources[:300]:
        with open(path, encoding="utf-8", errors="replace") as f:
            code = f.read()
        assert tools.complexity_bound(code) >= complexity(code), path


def test_the_tools_read_the_text_python_runs_whatever_its_coding_line():
    # in UTF-8 the code is inside a string; Python, told utf-7, reads +ACIAIgAi- as \"\"\" and runs it
    hidden = b"# coding: utf-7\nS = \"\"\"+ACIAIgAi-\n" + BRANCHY + b"+ACIAIgAi-\"\"\"\n"
    assert analyse({"hidden.py": hidden}).cyclomatic_complexity == 13


def test_only_python_and_shell_files_are_measured():
    report = analyse({"README.md": b"# notes\n", "data.json": b"{}"})
    assert report.metrics() == {} and (report.python_files, report.shell_files) == (0, 0)


def test_an_analysis_started_before_the_run_is_the_one_measured_and_a_failure_is_not_kept(monkeypatch):
    cached = tools.CachedAnalysis()
    files = {"a.py": SLOPPY, "b/c.py": TIDY}
    started = cached.start(files)
    assert cached(dict(files)) is started.result()  # the same files (a new dict) wait for the started run
    assert started.result().metrics() == analyse(files).metrics()
    assert cached.start({"a.py": SLOPPY}) is not started

    def no_ruff():
        raise tools.QualityToolError("ruff is not installed")
    monkeypatch.setattr(tools, "ruff_binary", no_ruff)
    with pytest.raises(tools.QualityToolError):
        cached({"d.py": TIDY})
    monkeypatch.undo()  # installed again: the failure was not remembered
    assert cached({"d.py": TIDY}).metrics() == analyse({"d.py": TIDY}).metrics()


@NEEDS_SHELLCHECK
def test_shellcheck_counts_findings_and_ignores_directives_and_rc_files():
    script = b'#!/bin/sh\n# shellcheck disable=SC2086,SC2115\nrm -rf $HOME/$1\n'
    report = analyse({"run.sh": script, ".shellcheckrc": b"disable=all\n"})
    assert report.shellcheck_rules == {"SC2086": 2, "SC2115": 1}
    by_shebang = analyse({"tool": b"#!/usr/bin/env bash\necho $1\n"})
    assert by_shebang.shellcheck_rules == {"SC2086": 1}
    assert analyse({"ok.sh": b'#!/bin/sh\necho "$1"\n'}).shellcheck_findings == 0


# ------------------------------------------------------------------ in real episodes

def _metrics(info):
    return {k: info["metrics"].get(k) for k in ("lint_findings", "cyclomatic_complexity", "maintainability_index",
                                                "shellcheck_findings")}


def test_single_shot_episodes_measure_the_code_the_action_wrote():
    env = gym.make("agentenv/examples.fizzbuzz-v0", metrics=["lint_findings"])
    try:
        env.reset()
        with open(os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")) as f:
            _, reward, _, _, info = env.step(f.read())
        assert reward == 1.0 and info["metrics"]["lint_findings"] == 0 and info["metrics"]["cyclomatic_complexity"] >= 2
        env.reset()
        _, _, _, _, info = env.step(SLOPPY.decode())
        assert info["metrics"]["lint_rules"]["F401"] == 1 and info["metrics"]["lint_findings"] == 6
    finally:
        env.close()


def test_agentic_episodes_measure_changed_files_only_never_tests_or_hidden_files():
    env = gym.make("agentenv/examples.bank_transfer-v0", mode="agentic", metrics="all")
    try:
        env.reset()
        _, _, _, _, info = env.step({"action": "submit"})
        assert _metrics(info) == dict.fromkeys(_metrics(info))  # nothing changed: nothing measured
        env.reset()
        for path in ("tests/test_bank.py", "tests/test_hidden_bank.py", "tests/conftest.py"):  # protected or hidden
            env.step({"action": "overwrite_file", "path": path, "content": SLOPPY.decode()})
        env.step({"action": "overwrite_file", "path": "bank/helpers.py", "content": TIDY.decode()})
        _, _, _, _, info = env.step({"action": "submit"})
        assert info["metrics"]["lint_findings"] == 0 and info["metrics"]["cyclomatic_complexity"] == 1
    finally:
        env.close()


@NEEDS_SHELLCHECK
def test_shell_tasks_get_shellcheck_findings():
    env = gym.make("agentenv/examples.disk_report-v0", metrics=["shellcheck_findings"])
    try:
        env.reset()
        _, _, _, _, info = env.step("#!/bin/sh\nfor f in $(find $1 -type f); do wc -c $f; done\n")
        assert info["metrics"]["shellcheck_findings"] >= 3 and "lint_findings" not in info["metrics"]
    finally:
        env.close()


def test_a_rule_can_name_a_quality_metric(tmp_path):
    folder = tmp_path / "fizzbuzz"
    shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz"), folder)
    doc = json.loads((folder / "task.json").read_text())
    gate = {"metric": "test_pass_rate", "min": 1.0}
    doc["reward_logic"] = {"type": "composite", "success_threshold": 0.8, "rules": [
        {"metric": "test_pass_rate", "weight": 0.8, "threshold": 1.0, "scoring": "step"},
        {"metric": "lint_findings", "weight": 0.2, "threshold": 10, "gate": gate}]}
    (folder / "task.json").write_text(json.dumps(doc))
    reference = (folder / "solution" / "fizzbuzz.py").read_text()
    sloppy = "import os, sys\n" + reference.replace("    ", "  ").replace("\n\n", "\n")
    env = agentenv.CodingEnv(str(folder / "task.json"))
    try:
        env.reset()
        _, clean, _, _, info = env.step(reference)
        assert clean == pytest.approx(1.0) and info["success"]
        env.reset()
        _, messy, _, _, info = env.step(sloppy)
        lint = info["metrics"]["lint_findings"]
        assert lint >= 2 and messy == pytest.approx(0.8 + 0.2 * (1 - lint / 10)) and info["success"]
    finally:
        env.close()


def test_quality_is_measured_only_where_the_reward_reads_it_or_the_env_asks(tmp_path, monkeypatch):
    """A ruff process and radon are a fifth of a short episode's CPU: by default they run only where
    the task's reward reads a quality metric (a rule, a gate, or a reward model, which sees every
    metric), else where ``metrics=`` asks."""
    ran = []
    real = tools.analyse
    monkeypatch.setattr(tools, "analyse", lambda files: ran.append(sorted(files)) or real(files))
    folder = tmp_path / "fizzbuzz"
    shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz"), folder)
    reference = (folder / "solution" / "fizzbuzz.py").read_text()
    unique = iter(range(100))  # a new file each time: the analysis cache never answers for the tools

    def play(**kwargs):
        env = agentenv.CodingEnv(str(folder / "task.json"), **kwargs)
        try:
            env.reset()
            before = len(ran)
            _, reward, _, _, info = env.step(f"{reference}\n# {next(unique)} {tmp_path.name}\n")
            assert reward == 1.0
            return "lint_findings" in info["metrics"], len(ran) - before
        finally:
            env.close()

    assert play() == (False, 0)  # the example's reward names only its tests
    assert play(metrics="all") == (True, 1)
    assert play(metrics=["maintainability_index"]) == (True, 1)  # one provider: all of its metrics
    assert play(metrics=["test_pass_rate"]) == (False, 0)
    doc = json.loads((folder / "task.json").read_text())
    doc["reward_logic"]["rules"].append({"reward_model": "reference_similarity", "weight": 0.0})
    (folder / "task.json").write_text(json.dumps(doc))
    assert play() == (True, 1)
    with pytest.raises(ValueError, match=r"'lint_finding'.*did you mean 'lint_findings'"):
        agentenv.CodingEnv(str(folder / "task.json"), metrics=["lint_finding"])
    with pytest.raises(ValueError, match="'reward', 'all' or a list of metric names, not 'lint_findings'"):
        agentenv.CodingEnv(str(folder / "task.json"), metrics="lint_findings")


def test_eval_measures_quality_when_asked(tmp_path, capsys):
    def lint_in_records(*extra):
        out = tmp_path / f"run{len(extra)}"
        code = main(["eval", "--suite", "examples", "--tasks", "examples.fizzbuzz", "--agent",
                                  "reference", "--out", str(out), "--quiet", *extra])
        assert code == 0
        records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
        return any("lint_findings" in json.dumps(r) for r in records)

    assert not lint_in_records()
    assert lint_in_records("--metrics", "lint_findings,test_pass_rate")
    with pytest.raises(SystemExit):
        main(["eval", "--suite", "examples", "--agent", "reference", "--metrics", "lint"])
    assert "no installed plugin measures 'lint'; known: reward, all," in capsys.readouterr().err
