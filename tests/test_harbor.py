"""Harbor task folders in and out (agentenv/builtin/authoring/harbor.py), on tasks written here in
Harbor's format (tests/fixtures/harbor) and on bundled tasks, in real sandboxes: an import is
checked by playing the converted task (the oracle's files score 1, the unchanged workspace 0)."""

from __future__ import annotations

import json
import os
import shutil
import tomllib

import pytest

import agentenv
from agentenv._cli import main
from agentenv.builtin.authoring.harbor import (Refusal, _convert_test_script, _judged_pytest, _parse_dockerfile,
                                               export_harbor, exportable, import_harbor)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "harbor")


def test_import_converts_what_it_can_and_says_why_not_for_the_rest(tmp_path):
    report = import_harbor(FIXTURES, str(tmp_path / "hb"))
    converted = {os.path.basename(os.path.dirname(p)) for p in report.written}
    assert converted == {"csv_mean", "json_reward"}
    reasons = {os.path.basename(d): why for d, why in report.refused}
    assert "docker_image" in reasons["prebuilt-image"]
    assert "docker-compose" in reasons["compose"]
    assert "no network" in reasons["needs-network"] and "git clone" in reasons["needs-network"]
    assert "RUN git clone" in reasons["builds-from-source"]
    task = agentenv.load_task(str(tmp_path / "hb" / "csv_mean" / "task.json"))
    assert task.limits.wall_time_s == 60.0 and task.limits.memory_mb == 1024
    assert task.environment.dependencies == ("pytest==8.3.5",) and task.difficulty == "easy"
    assert task.description.startswith("Write `/app/stats.py`")
    assert task.workspace.read() == {"data.csv": b"name,value\nalpha,3\nbeta,10\ngamma,4.5\n"}
    assert set(task.reference_solution.read()) == {"stats.py"}  # what solve.sh wrote, run in a sandbox
    assert task.metadata["harbor"]["agent_timeout_sec"] == 300.0 and task.metadata["harbor"]["debian_packages"] == ["gzip"]
    hidden = task.hidden_files.read()
    assert b"astral.sh" not in hidden[".harbor/tests/test.sh"] and b"/app/.harbor/tests/test_outputs.py" in \
        hidden[".harbor/tests/test.sh"]
    assert agentenv.find_suite(str(tmp_path / "hb")).name == "hb"
    # and back out: Harbor -> agentenv -> Harbor keeps the prompt, the limits and the files
    folder = export_harbor(task, str(tmp_path / "again"))
    original = os.path.join(FIXTURES, "csv-mean")
    assert open(os.path.join(folder, "instruction.md")).read().strip() == \
        open(os.path.join(original, "instruction.md")).read().strip()
    config = tomllib.loads(open(os.path.join(folder, "task.toml")).read())
    assert config["verifier"]["timeout_sec"] == 60.0 and config["environment"]["memory_mb"] == 1024
    assert open(os.path.join(folder, "environment", "app", "data.csv"), "rb").read() == \
        open(os.path.join(original, "environment", "data.csv"), "rb").read()
    assert open(os.path.join(folder, "tests", "hidden", ".harbor", "tests", "test_outputs.py")).read() == \
        open(os.path.join(original, "tests", "test_outputs.py")).read()


def test_the_cli_reports_refusals_with_exit_status_1(tmp_path, capsys):
    assert main(["import", "harbor", os.path.join(FIXTURES, "compose"), "--out", str(tmp_path / "x")]) == 1
    assert "multi-container environments are not converted" in capsys.readouterr().out
    with pytest.raises(agentenv.ToolError, match="no task.toml"):
        import_harbor(str(tmp_path), str(tmp_path / "y"))


def test_dockerfile_and_test_script_conversion():
    docker = _parse_dockerfile("FROM python:3.12-slim\nENV A=1 B=\"two words\"\nRUN pip install --no-cache-dir "
                               "numpy==2.1.0 \\\n    requests && apt-get update\nWORKDIR /app\nCOPY src/ /app/src/\n",
                               {"src/x.py": b"x", "src/y/z.py": b"z", "other": b""})
    assert docker["python"] == "3.12" and docker["pip"] == ["numpy==2.1.0", "requests"]
    assert docker["env"] == {"A": "1", "B": "two words"} and set(docker["files"]) == {"/app/src/x.py", "/app/src/y/z.py"}
    for bad, why in (("FROM node:20\n", "only python"), ("FROM python:3.11\nRUN make\n", "RUN make"),
                     ("FROM python:3.11\nADD https://x.org/a.tgz /app/\n", "no network"),
                     ("FROM python:3.11\nRUN pip install -r requirements.txt\n", "requirement files")):
        with pytest.raises(Refusal, match=why):
            _parse_dockerfile(bad, {})
    script, packages = _convert_test_script("uv pip install pytest==8.3.5 requests\nsource .tbench-testing/bin/activate\n"
                                            ". /opt/venv/bin/activate\nuv run pytest /tests/t.py\n"
                                            "if pytest /tests -q; then echo ok; fi\n"
                                            "echo $? > /logs/verifier/reward.txt\n")
    assert packages == ["pytest==8.3.5", "requests"]
    pytest_run = "python -m pytest -c /app/.harbor/agentenv-pytest.ini --rootdir /app/.harbor/tests -p no:cacheprovider"
    assert script == (f"{pytest_run} /app/.harbor/tests/t.py\nif {pytest_run} /app/.harbor/tests -q; then echo ok; fi\n"
                      "echo $? > /tmp/.harbor-logs/verifier/reward.txt\n")


def test_export_writes_harbors_format_and_refuses_what_it_cannot(tmp_path):
    task = agentenv.load_task(os.path.join(ROOT, "tasks", "examples", "fizzbuzz", "task.json"))
    folder = export_harbor(task, str(tmp_path))
    config = tomllib.loads(open(os.path.join(folder, "task.toml")).read())
    assert config["verifier"]["timeout_sec"] == 30.0 and config["environment"]["memory_mb"] == 512
    assert config["environment"]["allow_internet"] is False and config["metadata"]["difficulty"] == "easy"
    assert open(os.path.join(folder, "instruction.md")).read().endswith("Write your solution to `/app/fizzbuzz.py`.\n")
    docker = open(os.path.join(folder, "environment", "Dockerfile")).read()
    assert "FROM python:3.11-slim" in docker and "pytest==8.3.5" in docker and "COPY app/ /app/" in docker
    assert os.path.exists(os.path.join(folder, "tests", "protected", "tests", "test_fizzbuzz.py"))
    assert "/logs/verifier/reward.txt" in open(os.path.join(folder, "tests", "test.sh")).read()
    speed = agentenv.load_task(os.path.join(ROOT, "tasks", "examples", "fast_primes", "task.json"))
    assert "cpu_time_ms" in exportable(speed)  # a timing rule needs agentenv itself


def test_round_trip_through_harbor_keeps_the_task_solvable(tmp_path):
    for rel in ("examples/fizzbuzz", "logs/script_oom_report", "ops/hosts_sync"):
        export_harbor(agentenv.load_task(os.path.join(ROOT, "tasks", rel, "task.json")), str(tmp_path / "out"))
    report = import_harbor(str(tmp_path / "out"), str(tmp_path / "back"))  # each import plays ref (1) and no-op (0)
    assert not report.refused, report.refused
    assert len(report.written) == 3
    back = agentenv.load_task(str(tmp_path / "back" / "examples_fizzbuzz" / "task.json"))
    original = agentenv.load_task(os.path.join(ROOT, "tasks", "examples", "fizzbuzz", "task.json"))
    assert back.description.startswith(original.description) and back.limits.memory_mb == original.limits.memory_mb
    assert set(original.environment.dependencies) <= set(back.environment.dependencies)
    assert back.reference_solution.read() == original.reference_solution.read()
    assert json.loads(open(tmp_path / "back" / "suite.json").read())["name"] == "back"


# --------------------------------------------------------------------------- the reward, against the code under test

CORRECT_STATS = ("import csv\nrows = list(csv.DictReader(open('/app/data.csv')))\nvalues = [float(r['value']) for r in rows]\n"
                 "print(f'{sum(values) / len(values):.2f}')\nprint(max(rows, key=lambda r: float(r['value']))['name'])\n")
WRONG_STATS = "print('0.00')\nprint('nobody')\n"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Imported once, name -> task file: csv_mean (test.sh runs pytest on the agent's stats.py, then
    writes 1 or 0 to reward.txt: that standard shape is judged by agentenv's pytest judge), csv_script
    (the same with one more line after, so that verify.py runs test.sh) and json_reward (a ``python3 -``
    check that writes reward.json)."""
    out = tmp_path_factory.mktemp("imported")
    variant = out / "src" / "csv-script"
    shutil.copytree(os.path.join(FIXTURES, "csv-mean"), variant)
    with open(variant / "tests" / "test.sh", "a") as f:
        f.write("echo 'verifier done'\n")
    written = []
    for folder in (os.path.join(FIXTURES, "csv-mean"), str(variant), os.path.join(FIXTURES, "json-reward")):
        report = import_harbor(folder, str(out / "tasks"))
        assert not report.refused, report.refused
        written += report.written
    return {os.path.basename(os.path.dirname(p)): p for p in written}


def _play(task_path, files):
    """The reward of one episode that writes *files* (path -> text) and submits."""
    env = agentenv.CodingEnv(agentenv.load_task(task_path))
    try:
        env.reset()
        for path, content in files.items():
            env.step({"action": "overwrite_file", "path": path, "content": content})
        _, reward, *_ = env.step({"action": "submit"})
        return reward
    finally:
        env.close()


def test_code_under_test_cannot_answer_for_test_sh_in_the_reward_file(imported):
    """stats.py, run by test.sh's pytest, wrote reward.json = 1 (read first, so test.sh's own 0 in
    reward.txt went unread), or wrote reward.txt = 1 and made it or its folder read-only (test.sh's write
    failed, its exit status was only printed, or hidden by a later line): full marks for a wrong answer.
    Only the file test.sh names is read, a test.sh that exits non-zero scores 0, and so does a run that
    leaves the reward file or its folder unwritable."""
    logs = "/tmp/.harbor-logs/verifier"
    as_json = f"import os\nos.makedirs({logs!r}, exist_ok=True)\nopen({logs!r} + '/reward.json', 'w').write('{{\"reward\": 1.0}}')\n"
    read_only = f"import os\nopen({logs!r} + '/reward.txt', 'w').write('1\\n')\nos.chmod({logs!r} + '/reward.txt', 0o444)\n"
    folder_read_only = f"import os\nopen({logs!r} + '/reward.txt', 'w').write('1\\n')\nos.chmod({logs!r}, 0o500)\n"
    for task in (imported["csv_script"], imported["csv_mean"]):
        assert _play(task, {"/app/stats.py": as_json + WRONG_STATS}) == 0.0
        assert _play(task, {"/app/stats.py": read_only + WRONG_STATS}) == 0.0
        assert _play(task, {"/app/stats.py": folder_read_only + WRONG_STATS}) == 0.0
        assert _play(task, {"/app/stats.py": CORRECT_STATS}) == 1.0


def test_tests_naming_both_reward_files_or_neither_are_refused(tmp_path):
    for name, line in (("both", "echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json"),
                       ("neither", "exit 0")):
        task = tmp_path / name
        shutil.copytree(os.path.join(FIXTURES, "csv-mean"), task)
        (task / "tests" / "test.sh").write_text(f"#!/bin/bash\n{line}\n")
        report = import_harbor(str(task), str(tmp_path / "out"), run_oracle=False)
        assert not report.written and f"write {name}" in report.refused[0][1], report.refused


def test_workspace_files_do_not_run_in_test_sh(imported):
    """Files the agent left in /app ran in test.sh before the tests could: a workspace virtual
    environment's bin/activate (sourced by Terminal-Bench's test.sh; only .venv/venv were dropped), an
    /app/pytest.py standing in for pytest (``uvx pytest`` became ``python -m pytest``, cwd first on
    sys.path), and an /app/pytest.ini that made /app pytest's rootdir so that its conftest.py exited 0:
    full marks each for a wrong answer. Activate lines are dropped wherever the environment lives, test.sh's
    Python keeps the working directory off sys.path, and pytest runs with the hidden tests' configuration
    and rootdir."""
    wrong = {"/app/stats.py": WRONG_STATS}
    for task in (imported["csv_script"], imported["csv_mean"]):
        assert _play(task, {**wrong, "/app/.tbench-testing/bin/activate":
                            "echo 1 > /tmp/.harbor-logs/verifier/reward.txt\nexit 0\n"}) == 0.0
        assert _play(task, {**wrong, "/app/pytest.py": "raise SystemExit(0)\n"}) == 0.0
        assert _play(task, {**wrong, "/app/pytest.ini": "[pytest]\n",
                            "/app/conftest.py": "import os\nos._exit(0)\n"}) == 0.0
        assert _play(task, {"/app/stats.py": CORRECT_STATS, "/app/pytest.ini": "[pytest]\n"}) == 1.0


def test_a_workspace_module_does_not_shadow_the_standard_library_in_the_check(imported):
    """json-reward's test.sh runs no agent code: ``python3 - <<PY import configparser ...`` in /app. With
    cwd first on sys.path, an /app/configparser.py was the check's configparser and wrote reward 1 with
    the config left wrong; PYTHONSAFEPATH keeps it out."""
    task = imported["json_reward"]
    shadow = "import json, os\njson.dump({'reward': 1.0}, open('/tmp/.harbor-logs/verifier/reward.json', 'w'))\nos._exit(0)\n"
    assert _play(task, {"/app/configparser.py": shadow}) == 0.0
    fixed = "[server]\nport = 8080\nworkers = 8\n"
    assert _play(task, {"/app/config.ini": fixed, "/app/configparser.py": "raise SystemExit(1)\n"}) == 1.0


def test_a_python_before_3_11_is_refused(tmp_path):
    """PYTHONSAFEPATH, which keeps the workspace off sys.path, is new in Python 3.11."""
    task = tmp_path / "old-python"
    shutil.copytree(os.path.join(FIXTURES, "json-reward"), task)
    (task / "environment" / "Dockerfile").write_text("FROM python:3.10-slim\nWORKDIR /app\nCOPY config.ini .\n")
    report = import_harbor(str(task), str(tmp_path / "out"), run_oracle=False)
    assert not report.written and "Python 3.11" in report.refused[0][1], report.refused


def test_code_under_test_cannot_rewrite_what_test_sh_runs_after_it(imported, tmp_path):
    """bash reads test.sh as it runs it: stats.py, run by its pytest, wrote a new ending after that line
    (``echo 1 > reward.txt; exit 0``), and code test.sh runs before a check of the tests rewrote the
    check: full marks for a wrong answer. test.sh is read once and given to bash whole, and a run in
    which a file of the tests changed scores 0."""
    appends = ("import os\np = '/app/.harbor/tests/test.sh'\ns = open(p).read()\ni = s.index('\\n', s.index('pytest')) + 1\n"
               "open(p, 'w').write(s[:i] + 'echo 1 > /tmp/.harbor-logs/verifier/reward.txt; exit 0\\n' + s[i:])\n")
    for task in (imported["csv_script"], imported["csv_mean"]):
        assert _play(task, {"/app/stats.py": appends + WRONG_STATS}) == 0.0
    task = tmp_path / "run-then-check"
    shutil.copytree(os.path.join(FIXTURES, "json-reward"), task)
    (task / "tests" / "test.sh").write_text("#!/bin/bash\npython /app/run.py\npython /tests/check.py\n")
    (task / "tests" / "check.py").write_text("ok = open('/app/out.txt').read().strip() == '42'\n"
                                             "open('/logs/verifier/reward.txt', 'w').write('1' if ok else '0')\n")
    report = import_harbor(str(task), str(tmp_path / "out"), run_oracle=False)
    path = report.written[0]
    rewrite = ("open('/app/.harbor/tests/check.py', 'w').write(\"open('/tmp/.harbor-logs/verifier/reward.txt', 'w')"
               ".write('1')\\n\")\nopen('/app/out.txt', 'w').write('41')\n")
    assert _play(path, {"/app/run.py": rewrite}) == 0.0
    # a change that is put back before test.sh ends (red team, stop 37: 1.0 when only the files before and
    # after were compared): the check swapped for one that restores it, the check written in place
    # through a hard link and restored, and the hidden folder renamed away, copied and renamed back
    wrong, one = "open('/app/out.txt', 'w').write('41')\n", "open('/tmp/.harbor-logs/verifier/reward.txt', 'w').write('1')\n"
    swap = ("import os\np = '/app/.harbor/tests/check.py'\norig = open(p, 'rb').read()\nos.unlink(p)\n"
            f"open(p, 'w').write('open(%r, \"wb\").write(%r)\\n' % (p, orig) + {one!r})\n" + wrong)
    linked = ("import os\np = '/app/.c.py'\nos.link('/app/.harbor/tests/check.py', p)\norig = open(p, 'rb').read()\n"
              f"os.chmod(p, 0o644)\nopen(p, 'w').write('open(%r, \"wb\").write(%r)\\n' % (p, orig) + {one!r})\n" + wrong)
    moved = ("import os, shutil\nos.rename('/app/.harbor', '/app/.h2')\nshutil.copytree('/app/.h2', '/app/.harbor')\n"
             "open('/app/.harbor/tests/check.py', 'w').write('import os, shutil\\nshutil.rmtree(\"/app/.harbor\")\\n'\n"
             f"    'os.rename(\"/app/.h2\", \"/app/.harbor\")\\n' + {one!r})\n" + wrong)
    for run in (swap, linked, moved):
        assert _play(path, {"/app/run.py": run}) == 0.0, run
    assert _play(path, {"/app/run.py": "open('/app/out.txt', 'w').write('42')\n"}) == 1.0


def test_a_standard_test_sh_becomes_a_judged_pytest_run(imported):
    """pytest on the hidden tests, then 1 or 0 by its exit status: the task runs that pytest under
    agentenv's judge, where code under test cannot stop, replace or report for the tests (in test.sh's
    pytest it could: stats.py exiting 0 from an atexit hook, a conftest, a forged report, ...)."""
    task = agentenv.load_task(imported["csv_mean"])
    assert [s["command"] for s in task.execution_steps] == ["pytest -p no:cacheprovider /app/.harbor/tests/test_outputs.py -rA"]
    assert [r.metric for r in task.reward.rules] == ["test_pass_rate"]
    assert "verify.py" in agentenv.load_task(imported["csv_script"]).execution_steps[0]["command"]
    assert "verify.py" in agentenv.load_task(imported["json_reward"]).execution_steps[0]["command"]
    assert _judged_pytest("python -m pytest /app/.harbor/tests/t.py; rm -rf /\n") is None
