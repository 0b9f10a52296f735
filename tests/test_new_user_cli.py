"""The command line as the new users of issue 18 met it: each test runs ``agentenv`` as they did and
checks what they saw."""

import json
import os
import pty
import re
import shutil
import subprocess
import sys

import pytest

import agentenv
from agentenv._cli import build_parser
from _paths import EXAMPLES, REPO

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")
LEADERBOARD = os.path.join(REPO, "tests", "fixtures", "leaderboard")


def cli(*args, env=None, cwd=None):
    return subprocess.run([AGENTENV, *args], capture_output=True, text=True, timeout=600, env=env, cwd=cwd)


@pytest.mark.parametrize("args", [
    ["list"], ["plugins"], ["schema"], ["--help"], ["run", "examples.fizzbuzz", "--agent", "noop", "--json"],
    ["leaderboard", *(os.path.join(LEADERBOARD, run) for run in ("noop", "reference", "random_1")), "--json"]],
    ids=["list", "plugins", "schema", "help", "run", "leaderboard"])
def test_a_reader_that_stops_early_gets_no_traceback(args):
    """``agentenv ... | head``: the reader goes away before the command writes."""
    proc = subprocess.Popen([AGENTENV, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # as `head` does once it has its lines; the command has not written yet
    err = proc.stderr.read()
    status = proc.wait(timeout=600)
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err, err
    # 128 + SIGPIPE, what a shell shows for `cat | head`; argparse's --help swallows the error itself
    assert status == (0 if args == ["--help"] else 141), (status, err)


def test_a_mistyped_command_gets_the_closest_one():
    out = cli("lsit")
    assert out.returncode == 2 and "invalid choice: 'lsit'; did you mean 'list'?" in out.stderr


def test_list_has_a_task_id_column_and_aligned_columns():
    out = cli("list")
    lines = out.stdout.splitlines()
    header, rows = lines[0], lines[1:-1]
    assert header.split()[:3] == ["TASK", "ID", "SUITE"] and "ENV ID" in header
    suite_at, env_at = header.index("SUITE"), header.index("ENV ID")
    by_id = {}
    for line in rows:
        task_id = line.split()[0]
        by_id[task_id] = line
        assert line[suite_at - 1] == " " and line[suite_at] != " ", line  # every suite name starts under SUITE
        assert line[env_at:].startswith(f"agentenv/{task_id}-v"), line
    assert "examples.fizzbuzz" in by_id and "synth_inflection" in by_id[next(i for i in by_id if "inflection" in i)]
    assert lines[-1] == f"{len(rows)} task(s)"


def test_an_unknown_task_id_gets_the_closest_ids_not_all_of_them():
    out = cli("run", "examples.fizbuzz")
    assert out.returncode == 1
    assert "did you mean 'examples.fizzbuzz'" in out.stderr and "agentenv list shows them" in out.stderr
    assert "pybugs." not in out.stderr  # not the 84 ids


def test_a_task_folder_runs_its_task_json_and_python_names_it(tmp_path):
    folder = os.path.join(EXAMPLES, "fizzbuzz")
    out = cli("run", folder, "--agent", "noop")
    assert out.returncode == 0 and "=== examples.fizzbuzz [single_shot] agent=noop: reward=0.000" in out.stdout
    with pytest.raises(agentenv.TaskSpecError, match=re.escape(f"its task file is {folder}/task.json")):
        agentenv.load_task(folder)
    with pytest.raises(agentenv.TaskSpecError, match="it has no task.json"):
        agentenv.load_task(tmp_path)


def test_a_suite_folder_without_suite_json_says_what_a_suite_file_holds(tmp_path):
    (tmp_path / "t1").mkdir()
    shutil.copy(os.path.join(EXAMPLES, "fizzbuzz", "task.json"), tmp_path / "t1" / "task.json")
    out = cli("eval", "--suite", str(tmp_path), "--agent", "noop", "--out", str(tmp_path / "out"))
    assert out.returncode == 1
    assert "task document" not in out.stderr and "in the suite folder" in out.stderr
    assert '"tasks": ["*/task.json"]' in out.stderr and "1 task file(s) (t1/task.json)" in out.stderr


def test_agent_help_lists_every_installed_agent():
    out = cli("eval", "--help")
    text = " ".join(out.stdout.split())
    for name in agentenv.registry().agents:  # sb3 and sb3-best come from the installed agentenv-sb3
        assert re.search(rf"\b{re.escape(name)}\b", text), name
    assert "sb3-best" in text


def _option_blocks(help_text):
    """Each option's block of --help text (its first line up to the next option)."""
    blocks, current = {}, None
    for line in help_text.splitlines():
        match = re.match(r"  (-{1,2}[\w-]+)", line)
        if match:
            current = match.group(1)
            blocks[current] = line
        elif current and line.startswith("    "):
            blocks[current] += " " + line.strip()
        else:
            current = None
    return blocks


def test_every_option_with_a_default_shows_it_in_help():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    missing = []
    for name, sub in commands.items():
        blocks = _option_blocks(sub.format_help())
        for action in sub._actions:
            if not action.option_strings or action.default in (None, False, "", "==SUPPRESS=="):
                continue
            block = next((blocks[o] for o in action.option_strings if o in blocks), "")
            if "default" not in block.lower():
                missing.append(f"agentenv {name} {'/'.join(action.option_strings)}")
    assert not missing, missing


def test_eval_names_failure_causes_as_results_json_does(tmp_path):
    out = cli("eval", "--suite", "examples", "--agent", "noop", "--tasks", "examples.fizzbuzz,examples.word_count",
              "--out", str(tmp_path / "run"))
    assert out.returncode == 0, out.stderr
    progress = [line for line in out.stderr.splitlines() if line.startswith("[eval]")]
    assert progress and "2 unsolved" in progress[-1] and "failed" not in progress[-1], progress
    results = json.load(open(tmp_path / "run" / "results.json"))
    assert results["overall"]["failures"]["unsolved"] == 2 and "failures: unsolved 2" in out.stdout


BUILD = """
import agentenv
from agentenv._spec import EnvironmentConfig
agentenv.registry().runtime_for("python3").prepare(EnvironmentConfig("python3"), agentenv.cache_dir())
"""


def _run_on_terminal(code, env):
    """Run Python *code* with stderr on a pseudo-terminal; returns what the terminal showed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=slave, stdout=subprocess.DEVNULL, env=env)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.wait(timeout=600) == 0, shown[-2000:]
    return shown.decode("utf-8", "replace")


def test_the_first_build_of_a_runtime_shows_progress_on_a_terminal_only(tmp_path):
    shown = _run_on_terminal(BUILD, {**os.environ, "AGENTENV_CACHE": str(tmp_path / "tty")})
    assert "agentenv: first use: building runtime python 3." in shown
    assert re.search(r"built runtime python 3\.\S+ \(\d+\.\d s; cached from now on\)", shown), shown
    piped = subprocess.run([sys.executable, "-c", BUILD], capture_output=True, text=True,
                           env={**os.environ, "AGENTENV_CACHE": str(tmp_path / "pipe")})
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr  # logs and captured output stay clean
