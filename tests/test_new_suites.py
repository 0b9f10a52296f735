"""The testwriting, logs and ops suites: what the RL optimizer would write to score without doing the
work earns nothing, in real sandboxes (tests/test_suites.py plays every task's reference and no-op;
the audits are recorded in each suite's README).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import types

import pytest

import agentenv
from agentenv import CodingEnv, load_task, parse_task
from agentenv._cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "tasks")
sys.path.insert(0, os.path.join(TASKS, "_harness"))
import buildlib  # noqa: E402

SUITES = ("testwriting", "logs", "ops")


def score(path: str, code: str) -> tuple[float, dict, str]:
    """The reward of one single-shot solution, the info and the output of its evaluation."""
    env = CodingEnv(load_task(path), mode=agentenv.SINGLE_SHOT)
    try:
        return _play(env, code)
    finally:
        env.close()


def _play(env, code):
    env.reset()
    obs, reward, _, _, info = env.step(code)
    assert not info.get("reward_masked"), info.get("infra_error")
    return reward, info, obs["output"]


def test_the_new_suites_are_listed_with_at_least_15_tasks(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    for suite in SUITES:
        assert len([r for r in rows if r["suite"] == suite]) >= 15, suite


@pytest.mark.parametrize("suite", SUITES)
def test_inlined_check_programs_are_current(suite):
    stale = buildlib.stale_inline_files(os.path.join(TASKS, suite))
    assert not stale, f"rewrite with: python tasks/{suite}/build.py --inline-only ({stale[:3]})"


def test_a_check_that_writes_its_score_at_once_is_read():
    # the reward pipe exists before the command starts, and its folder is made (issue 16's kernel fix)
    task = parse_task({"task_id": "x.reward_now", "environment_config": {"runtime": "shell"},
                       "workspace": {"files": {"a.txt": "a"}},
                       "execution_steps": [{"action": "run_command", "command": "echo 0.25 > \"$AGENTENV_REWARD_FILE\"",
                                            "report": {"format": "reward_file"}}],
                       "reward_logic": {"type": "composite", "rules": [{"metric": "report_score", "weight": 1.0}]}})
    env = CodingEnv(task, mode=agentenv.AGENTIC)
    try:
        env.reset()
        _, reward, *_, info = env.step({"action": "submit"})
    finally:
        env.close()
    assert reward == 0.25 and info["metrics"]["report"] == "reward_file"


def test_the_namespace_backend_keeps_the_sandbox_contract_for_pipes():
    from agentenv.testing import check_backend
    assert "pipes" in check_backend(agentenv.get_backend("namespace"))


# --------------------------------------------------------------------------- the guard

LOGS_STATUS = os.path.join(TASKS, "logs", "script_status_report", "task.json")

REACH_FOR_THE_SCORE = r'''import json, os, signal, glob
# every channel a script could use to write the score or read the answers
for path in glob.glob("/tmp/**", recursive=True) + glob.glob("/tmp/.*/**", recursive=True):
    try:
        if os.path.exists(path) and not os.path.isdir(path):
            with open(path, "w") as f:
                f.write("1\n")
    except OSError:
        pass
leaked = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        leaked[pid] = open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace")
    except OSError:
        pass
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            with open(fd, "w") as f:
                f.write("1\n")
        except OSError:
            pass
found = [p for p in glob.glob("/app/.check/**", recursive=True)]
print(json.dumps({"leaked_reward_path": any("AGENTENV_REWARD_FILE" in e for e in leaked.values()),
                  "check_files": found, "env": sorted(os.environ)}))
os.kill(os.getppid(), signal.SIGKILL)
'''


def test_agent_code_in_a_check_cannot_reach_the_score_or_the_answers():
    reward, info, output = score(LOGS_STATUS, REACH_FOR_THE_SCORE)
    assert reward == 0.0
    assert info["metrics"]["report"] == "incomplete"  # it killed the check: a check that did not exit 0 scores nothing


def test_a_script_that_stays_behind_cannot_write_the_score_later():
    # a daemon that waits for the check to finish and then writes everywhere it can
    lingering = ("import os, time, glob\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1.5)\n"
                 "    for p in glob.glob('/tmp/**', recursive=True):\n        try:\n            open(p, 'w').write('1')\n"
                 "        except OSError:\n            pass\n    os._exit(0)\nprint('{}')\n")
    reward, info, _ = score(LOGS_STATUS, lingering)
    assert reward == 0.0 and info["metrics"]["report"] == "reward_file"


# --------------------------------------------------------------------------- logs

def test_answers_hard_coded_for_the_visible_log_earn_nothing():
    task = load_task(LOGS_STATUS)
    reference = task.reference_solution.read()["analyze.py"]
    log = os.path.join(os.path.dirname(LOGS_STATUS), "workspace", "logs", "access.log")
    visible = subprocess.run([sys.executable, "-c", reference.decode(), log], capture_output=True, text=True,
                             check=True).stdout
    hard_coded = f"print({visible.strip()!r})\n"
    reward, info, output = score(LOGS_STATUS, hard_coded)
    assert reward == 0.0, output
    assert score(LOGS_STATUS, reference.decode())[0] == 1.0


def test_answers_nested_past_the_parsers_depth_are_not_json():
    # the check crashed with RecursionError (an incomplete report, 0): now it says what is wrong
    env = CodingEnv(load_task(os.path.join(TASKS, "logs", "slow_endpoint", "task.json")), mode=agentenv.AGENTIC)
    try:
        env.reset()
        env.step({"action": "overwrite_file", "path": "answers.json", "content": "[" * 100_000 + "]" * 100_000})
        obs, reward, *_, info = env.step({"action": "submit"})
    finally:
        env.close()
    assert reward == 0.0 and "answers.json is not JSON: RecursionError" in obs["output"], obs["output"]


# --------------------------------------------------------------------------- ops

ROTATE = os.path.join(TASKS, "ops", "rotate_logs", "task.json")


def test_an_ops_script_that_edits_the_checkers_inputs_earns_nothing():
    hack = ("#!/bin/bash\nmkdir -p /app/.check\necho '{\"command\": [\"true\"], \"timeout_s\": 5, \"fixtures\": []}' "
            "> /app/.check/ops.json\nprintf 'def grade(*a):\\n    return 1.0, []\\n' > /app/.check/fstate.py\n"
            "for d in /tmp /tmp/ops /tmp/ops/root; do touch \"$d/.expected\" 2>/dev/null; done\n")
    reward, info, output = score(ROTATE, hack)
    assert reward == 0.0, output


def test_idempotence_cannot_be_faked_with_a_note_outside_the_root():
    reference = load_task(ROTATE).reference_solution.read()["bin/rotate_logs.sh"].decode()
    # rotate even empty logs (not idempotent), but skip the second run when a note says it already ran
    eager = reference.replace('  [ -s "$log" ] || continue\n', "")
    noted = "#!/bin/bash\n[ -e /tmp/.rotated ] && exit 0\ntouch /tmp/.rotated\n" + eager.split("\n", 1)[1]
    reward, info, output = score(ROTATE, noted)
    assert reward == 0.0 and "not idempotent: the second run changed the state again" in output, output


PROVISION = os.path.join(TASKS, "ops", "provision_users", "task.json")


def _provision(tmp_path, head: str, tail: str = "", fixtures: int | None = None) -> tuple[float, str]:
    """The reward of provision_users' reference made not idempotent (a user is added to a group it is
    in already), with *head* and *tail* around it; on the task's first *fixtures* hidden roots."""
    path = PROVISION
    if fixtures is not None:
        copy = tmp_path / "provision_users"
        shutil.copytree(os.path.dirname(PROVISION), copy)
        with open(copy / "hidden" / ".check" / "ops.json") as f:
            cfg = json.load(f)
        cfg["fixtures"] = cfg["fixtures"][:fixtures]
        (copy / "hidden" / ".check" / "ops.json").write_text(json.dumps(cfg))
        path = str(copy / "task.json")
    reference = load_task(PROVISION).reference_solution.read()["bin/provision_users.py"].decode()
    assert "        if name not in members:\n" in reference
    naive = reference.replace("        if name not in members:\n", "        if True:\n")
    reward, _, output = score(path, head + naive + tail)
    return reward, output


def test_idempotence_cannot_be_faked_with_a_note_in_what_is_not_state(tmp_path):
    # the first run's note is ROOT's own time, which the judged state leaves out (red team, stop 32: 1.0)
    mark = "1_000_000_007_000_000_000"
    head = f"import os, sys\nif os.stat(sys.argv[1]).st_mtime_ns == {mark}:\n    sys.exit(0)\n"
    tail = f"\nos.utime(sys.argv[1], ns=({mark}, {mark}))\n"
    honest = _provision(tmp_path, "")
    assert honest[0] == 0.5 and "not idempotent: the second run changed the state again" in honest[1], honest
    reward, output = _provision(tmp_path, head, tail)
    assert reward == 0.5 and "not idempotent: the second run changed the state again" in output, output


# Where the sandbox's process counter stands is a note no reset removes: a run leaves it at a mark
# (pid % 256 in 200..207, by forking), and every later run that finds it does nothing and leaves it there.
PID_MARK = """import os, sys
def _mark():
    while True:
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        if 200 <= child % 256 < 208:
            return
if 200 <= os.getpid() % 256 < 232:
    _mark()
    sys.exit(0)
"""


def test_idempotence_cannot_be_faked_by_telling_a_later_run_from_the_counters(tmp_path):
    # One root, so the mark is never in the way of a first run: the second run did nothing and the
    # root scored 1.0 (red team, stop 32). Now the root is also laid out afresh and run again, and the
    # script, which cannot tell that run from the idempotence run but by the tree, loses it.
    reward, output = _provision(tmp_path, PID_MARK, "\n_mark()\n", fixtures=1)
    assert reward == 0.0 and "run again on the same root it scored 0.00" in output, output


def test_code_under_test_cannot_write_into_the_checks_transcript():
    # every descriptor 1 the script can open: the check's parent shell's was the step's output
    forge = ("import os\nfor pid in filter(str.isdigit, os.listdir('/proc')):\n    try:\n"
             "        with open(f'/proc/{pid}/fd/1', 'w') as f:\n            f.write('FORGED: score 1.0000\\n')\n"
             "    except OSError:\n        pass\n")
    reward, info, output = score(PROVISION, forge)
    assert reward == 0.0 and "score 0.0000" in output and "FORGED" not in output, output


# --------------------------------------------------------------------------- testwriting

ROMAN = os.path.join(TASKS, "testwriting", "roman", "task.json")

HASH_THE_SOURCE = '''import hashlib, pathlib
import roman

def test_the_module_is_the_one_i_saw():
    assert hashlib.sha256(pathlib.Path(roman.__file__).read_bytes()).hexdigest() == "%s"
'''

SNAPSHOT_THE_FUNCTIONS = '''import inspect
import roman

SNAPSHOT = %r

def test_every_function_is_unchanged():
    for name, source in SNAPSHOT.items():
        assert inspect.getsource(getattr(roman, name)) == source
'''


@pytest.fixture(scope="module")
def roman_env():
    env = CodingEnv(load_task(ROMAN), mode=agentenv.SINGLE_SHOT)
    yield env
    env.close()


# A test that tells the module from a mutant by its text, not by what it does (red team, stop 32: each
# scored 1.0 on all 15 tasks). Rewrites are ast.unparse'd and mutants keep the original's layout; and
# the module ran first, which the run's pid says (pid == ppid + 1).
AS_GIVEN_OR_UNPARSED = """import ast, pathlib
import roman

ORIGINAL = %r

def test_the_module():
    text = pathlib.Path(roman.__file__).read_text()
    assert text == ORIGINAL or text == ast.unparse(ast.parse(text)) + "\\n"
"""
FIRST_OR_UNPARSED = """import ast, glob, os

def test_the_module():
    (path,) = glob.glob(os.path.join(os.getcwd(), "*.py"))
    text = open(path).read()
    assert os.getpid() == os.getppid() + 1 or text == ast.unparse(ast.parse(text)) + "\\n"
"""


# The module's file as an oracle: the subject compared with the module as given (red team, stop 32:
# 0.5-1.0 on every task), which in a project would compare the module with itself.
THE_FILE_AS_ORACLE = """import importlib.util, roman

def test_the_module():
    spec = importlib.util.spec_from_file_location("oracle", roman.__file__)
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    for n in range(1, 4000):
        assert roman.to_roman(n) == oracle.to_roman(n)
"""


def test_tests_that_fingerprint_the_source_earn_nothing(roman_env):
    # The subject a run judges is not on disk, and the module as given leaves the workspace for the run.
    path = os.path.join(os.path.dirname(ROMAN), "workspace", "roman.py")
    source = open(path, "rb").read()
    for fingerprint in (HASH_THE_SOURCE % hashlib.sha256(source).hexdigest(), AS_GIVEN_OR_UNPARSED % source.decode(),
                        FIRST_OR_UNPARSED, THE_FILE_AS_ORACLE):
        reward, info, output = _play(roman_env, fingerprint)
        assert reward == 0.0 and "the tests fail on the module as given" in output, output
    module = types.ModuleType("roman")
    exec(compile(source, path, "exec"), module.__dict__)
    snapshot = {n: inspect.getsource(f) for n, f in vars(module).items() if inspect.isfunction(f)}
    reward, info, output = _play(roman_env, SNAPSHOT_THE_FUNCTIONS % snapshot)
    assert reward == 0.0, output


REACHING_THE_CODE = {
    # the subject's own function, behind the run's wrapper: only in a generator's frame
    "the function behind the wrapper": ("import roman\n\ndef test_it():\n"
                                        "    calls = roman.to_roman.__closure__[0].cell_contents\n"
                                        "    assert 1000 in calls.gi_frame.f_locals['fn'].__code__.co_consts\n"),
    # native code reads any memory: the real function's code through the generator's tp_traverse
    # (gcc and Python.h are in the sandbox; before, the code object came back and the run went on)
    "a compiled extension": r'''import importlib.util, os, subprocess, sysconfig, roman

C = """#include <Python.h>
static int visit(PyObject *o, void *out) {
    if (PyFunction_Check(o)) PyList_Append((PyObject *)out, PyFunction_GET_CODE(o));
    return 0;
}
static PyObject *peek(PyObject *self, PyObject *gen) {
    PyObject *out = PyList_New(0);
    Py_TYPE(gen)->tp_traverse(gen, visit, out);
    return out;
}
static PyMethodDef M[] = {{"peek", peek, METH_O, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "peek", 0, -1, M};
PyMODINIT_FUNC PyInit_peek(void) { return PyModule_Create(&D); }
"""

def test_it():
    with open("/tmp/peek.c", "w") as f:
        f.write(C)
    so = "/tmp/peek" + sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.run(["gcc", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], "/tmp/peek.c", "-o", so],
                   check=True)
    peek = importlib.util.module_from_spec(importlib.util.spec_from_file_location("peek", so))
    codes = peek.peek(roman.to_roman.__closure__[0].cell_contents)
    assert "to_roman" in [code.co_name for code in codes]
''',
    # an exception thrown into the generator that holds the function came back with its frame (the
    # frame's globals were the run's own, not the module's): its locals held the real function
    "a throw into the wrapper's generator": ("import roman\n\ndef test_it():\n"
                                             "    calls = roman.to_roman.__closure__[0].cell_contents\n"
                                             "    try:\n        calls.throw(KeyError)\n    except KeyError as e:\n"
                                             "        assert e.__traceback__.tb_frame.f_locals['fn'] is not roman.to_roman\n"),
    "gc": "import gc, roman\n\ndef test_it():\n    assert gc.get_referents(roman.to_roman)\n",
    "ctypes": "import ctypes, roman\n\ndef test_it():\n    assert ctypes.string_at(id(roman.to_roman), 16)\n",
    "a trace function": "import sys, roman\n\ndef test_it():\n    sys.settrace(lambda *a: None)\n    roman.to_roman(4)\n",
}
CALLED_BACK = {  # frames of the module reached from a callback it calls (token_bucket's clock)
    "sys._getframe": "def clock():\n    import sys\n    seen.append(sys._getframe(1).f_lasti)\n    return 0.0\n",
    "a traceback's frame": ("def clock():\n    try:\n        raise KeyError\n    except KeyError as e:\n"
                            "        seen.append(e.__traceback__.tb_frame.f_back.f_lasti)\n    return 0.0\n"),
    "a generator's frame": ("def ticks():\n    while True:\n        seen.append(frame.f_back.f_back.f_lasti)\n"
                            "        yield 0.0\ng = ticks()\nframe = g.gi_frame\nclock = lambda: next(g)\n"),
}


@pytest.mark.parametrize("how", sorted(REACHING_THE_CODE))
def test_tests_that_reach_the_modules_code_are_stopped(roman_env, how):
    if how == "a compiled extension" and not (shutil.which("gcc") and os.path.exists("/usr/include/python3.11/Python.h")):
        pytest.skip("no gcc or no Python.h for python3.11 here (.ci/run installs both)")
    reward, info, output = _play(roman_env, REACHING_THE_CODE[how])
    assert reward == 0.0 and "the tests fail on the module as given (exit status 70)" in output, output
    assert "the run was stopped: the tests reached the module's code or frames" in output, output


# A test that never calls the module: it frees the subject and counts how many references its code
# held to each name and shared constant (sys.getrefcount), against a copy of the module it carries,
# loaded the way the run loads the subject (red team, stop 33: 0.50 on roman, 0.08-0.58 on 14 of
# the 15 tasks). The run keeps the subject alive and pads every such count with a random number.
COUNTING = r'''import ast, gc, sys, types
import roman

ORIGINAL = __ORIGINAL__

def _compiled(path):
    tree = ast.parse(ORIGINAL)
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
    return compile(tree, path, "exec", dont_inherit=True)

def _keys():
    found, todo = set(), [_compiled("x.py")]
    while todo:
        code = todo.pop()
        found.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
            elif isinstance(const, str) and const.isidentifier() or type(const) is int and -5 <= const <= 256:
                found.add(const)
    return sorted((sys.intern(k) if isinstance(k, str) else k for k in found - {"roman"}), key=repr)

def _copy(wrap):
    module = types.ModuleType("roman")
    exec(_compiled(roman.__file__), module.__dict__)
    for key, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is module.__dict__:
            setattr(module, key, wrap(value))
    return module

def _held(space, keys):
    gc.collect()
    before = [sys.getrefcount(k) for k in keys]
    space.clear()
    gc.collect()
    return [b - sys.getrefcount(k) for b, k in zip(before, keys)]

def test_nothing_but_counts():
    keys = _keys()
    boot = roman.to_roman.__globals__["_wrap"]
    wrap = (lambda f: boot(f, [])) if boot.__code__.co_argcount == 2 else boot
    _held(_copy(wrap).__dict__, keys)  # (first-use caches)
    assert _held(_copy(wrap).__dict__, keys) == _held(roman.__dict__, keys)
'''


def test_tests_that_count_references_to_the_modules_code_earn_nothing(roman_env):
    with open(os.path.join(TASKS, "testwriting", "roman", "workspace", "roman.py")) as f:
        code = COUNTING.replace("__ORIGINAL__", repr(f.read()))
    reward, info, output = _play(roman_env, code)
    assert reward == 0.0 and "the tests fail on the module as given (exit status 1)" in output, output
    # and a count read as it is says nothing either: it differs from run to run
    probe = "import sys, roman\n\ndef test_counts():\n    print('COUNTS', [sys.getrefcount(k) for k in ('M', 'to_roman', 5)])\n    assert False\n"
    counts = [[line for line in _play(roman_env, probe)[2].splitlines() if line.startswith("COUNTS")] for _ in range(2)]
    assert counts[0] and counts[0] != counts[1], counts


# Code of the tests' that ran inside the audit hook took its frame, and with it what the hook refers
# to (the padding, the real functions, its own globals, which made its check of a traceback's frame
# pass for code run in them): a finalizer of a collection that a frame the hook walked set off, and
# an event raised with sys.audit whose argument is a str subclass (red team, stop 33: the counts undone,
# 0.08-0.50 on all 15 tasks). No collection runs in the hook, and it reads nothing of a forged event.
INSIDE_THE_HOOK = {
    "a finalizer": ("import gc, sys, roman\n\nseen = []\n\nclass Cycle:\n    def __del__(self):\n"
                    "        seen.append(sys._getframe(1).f_code.co_name)\n\n"
                    "def deep(n):\n    return deep(n - 1) if n else sys._getframe()\n\n"
                    "def test_it():\n    threshold = gc.get_threshold()\n    for k in range(1, 40):\n"
                    "        gc.disable()\n        c = Cycle()\n        c.me = c\n        del c\n"
                    "        gc.set_threshold(gc.get_count()[0] + k)\n        gc.enable()\n        deep(60)\n"
                    "        gc.set_threshold(*threshold)\n        gc.collect()\n    assert {'hook', 'check'} & set(seen)\n"),
    "a forged event": ("import sys, roman\n\nseen = []\n\nclass Name(str):\n    def __hash__(self):\n"
                       "        seen.append(sys._getframe(1).f_code.co_name)\n        return str.__hash__(self)\n\n"
                       "def test_it():\n    sys.audit('object.__getattr__', roman.to_roman, Name('__code__'))\n"
                       "    assert seen\n"),
}


@pytest.mark.parametrize("how", sorted(INSIDE_THE_HOOK))
def test_no_code_of_the_tests_runs_inside_the_audit_hook(roman_env, how):
    reward, info, output = _play(roman_env, INSIDE_THE_HOOK[how])
    assert reward == 0.0 and "the tests fail on the module as given" in output, output
    assert "gate passed" not in output


# A Python signal handler gets the frame it interrupted, with no audit event: fired every 200 us by a
# timer it sampled the module's frames (their bytecode offsets and locals) and passed the gate
# (before: 0.17 on roman with nothing tested; through the hook's own frame it had also disarmed the
# hook, red team stop 32). The run cannot set a handler at all, by the module or by the C function.
SAMPLING = ("import {api}, roman\n\ndef test_it():\n    seen = []\n\n    def handler(signum, frame):\n"
            "        while frame is not None:\n            if frame.f_globals is vars(roman):\n"
            "                seen.append(frame.f_lasti)\n            frame = frame.f_back\n\n"
            "    {api}.signal(27, handler)\n    signal.setitimer(signal.ITIMER_PROF, 0.0002, 0.0002)\n"
            "    for i in range(20000):\n        roman.to_roman(1 + i % 3999)\n"
            "    signal.setitimer(signal.ITIMER_PROF, 0)\n    assert seen\n")


@pytest.mark.parametrize("api, refusal", [("signal", "tests may not set signal handlers here"),
                                          ("_signal", "PermissionError: [Errno 1] Operation not permitted")])
def test_tests_cannot_set_signal_handlers_to_sample_the_modules_frames(roman_env, api, refusal):
    code = SAMPLING.format(api=api).replace("import _signal,", "import _signal, signal,")
    reward, info, output = _play(roman_env, code)
    assert reward == 0.0 and "the tests fail on the module as given (exit status 1)" in output, output
    assert refusal in output, output


def test_tests_may_use_asyncio_subprocesses_and_the_standard_librarys_extensions(roman_env):
    # what the run refuses (signal handlers, extension modules of the tests' own) leaves these alone
    code = ("import asyncio, decimal, json, subprocess, sys, roman\n\ndef test_it():\n"
            "    async def four():\n        return roman.to_roman(4)\n\n    assert asyncio.run(four()) == 'IV'\n"
            "    out = subprocess.run([sys.executable, '-c', 'print(4)'], capture_output=True, text=True).stdout\n"
            "    assert roman.to_roman(int(out)) == 'IV' == json.loads(json.dumps('IV'))\n"
            "    assert roman.to_roman(int(decimal.Decimal('1994'))) == 'MCMXCIV'\n")
    reward, info, output = _play(roman_env, code)
    assert reward > 0.0 and "gate passed" in output, output


@pytest.mark.parametrize("how", sorted(CALLED_BACK))
def test_callbacks_cannot_reach_the_frames_of_the_module_that_calls_them(how):
    code = ("import token_bucket\n\nseen = []\n" + CALLED_BACK[how]
            + "\ndef test_it():\n    token_bucket.TokenBucket(1, 1, clock=clock).try_acquire()\n    assert seen\n")
    reward, info, output = score(os.path.join(TASKS, "testwriting", "token_bucket", "task.json"), code)
    assert reward == 0.0 and "the run was stopped" in output, output


def test_a_failure_inside_the_module_is_reported_as_pytest_reports_it(roman_env):
    reward, info, output = _play(roman_env, "import roman\n\ndef test_it():\n    assert roman.from_roman('bad!') == 1\n")
    assert reward == 0.0 and "ValueError: not a roman numeral: 'BAD!'" in output and "stopped" not in output, output


def test_tests_that_fail_everywhere_or_do_not_run_earn_nothing(roman_env):
    # (tests that pass on every mutant are the workspace's own stub: the no-op of tests/test_suites.py)
    assert _play(roman_env, "def test_nothing_works():\n    assert False\n")[0] == 0.0
    assert _play(roman_env, "# no tests at all\n")[0] == 0.0


def test_partial_tests_earn_the_share_of_mutants_they_kill(roman_env):
    partial = ("from roman import to_roman\n\ndef test_a_few():\n    assert to_roman(4) == 'IV'\n"
               "    assert to_roman(1994) == 'MCMXCIV'\n")
    reward, info, _ = _play(roman_env, partial)
    assert 0.0 < reward < 1.0, info["reward_breakdown"]
    coverage = info["reward_breakdown"]["1:report_score"]
    assert coverage["weight"] == 0.0 and 0.0 < coverage["score"] < 1.0  # coverage is shown, not rewarded
