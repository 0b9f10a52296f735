"""The HumanEval-format importer: ids, bad records, and verdicts that agree with the format's harness."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from agentenv import CodingEnv, load_task
from agentenv._cli import main
from agentenv import ProblemFileError
from agentenv.builtin.authoring.humaneval import gym_name, import_humaneval

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "humaneval_mini.jsonl")
SAMPLES = os.path.join(HERE, "fixtures", "humaneval_mini_samples.jsonl")
BUNDLED = os.path.join(os.path.dirname(HERE), "tasks", "humaneval_mini")
TIMEOUT = 1.0  # short per-problem limit, so the hanging samples cost little


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("he") / "humaneval_mini")
    report = import_humaneval(FIXTURE, out, timeout_s=TIMEOUT)
    return out, report


def test_good_records_become_valid_tasks_bad_ones_are_reported_by_line(imported):
    out, report = imported
    ids = sorted(load_task(p).task_id for p in report.written)
    assert ids == ["humaneval_mini.MiniEval_0", "humaneval_mini.MiniEval_1", "humaneval_mini.MiniEval_2",
                   "humaneval_mini.MiniEval_3", "humaneval_mini.Mini_Eval_4_v2"]
    assert [b.line for b in report.bad] == [3, 7, 8, 9, 10]
    messages = [str(b) for b in report.bad]
    assert messages[0].startswith("humaneval_mini.jsonl:3: not valid JSON")
    assert "field 'test': missing" in messages[1]
    assert "field 'entry_point'" in messages[2] and "'g' is not defined" in messages[2]
    assert "already appears on line 1" in messages[3]
    assert "check(candidate)" in messages[4]
    suite = json.load(open(os.path.join(out, "suite.json")))
    assert suite["name"] == "humaneval_mini"


def test_the_cli_reports_bad_records_and_exits_1(tmp_path, capsys):
    rc = main(["import", "humaneval", FIXTURE, "--out", str(tmp_path / "he")])
    captured = capsys.readouterr()
    assert rc == 1
    assert "imported 5 task(s)" in captured.out and "5 bad record(s)" in captured.out
    assert "humaneval_mini.jsonl:8: field 'entry_point'" in captured.err


def test_a_clean_gzipped_file_imports_with_exit_0(tmp_path, capsys):
    good = [line for line in open(FIXTURE) if '"MiniEval/0"' in line][:1]
    path = tmp_path / "one.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.writelines(good)
    assert main(["import", "humaneval", str(path), "--out", str(tmp_path / "gz"), "--name", "gz"]) == 0
    assert os.listdir(tmp_path / "gz" / "problems") == ["MiniEval_0.json"]


def test_an_unreadable_file_is_an_agentenv_error(tmp_path, capsys):
    with pytest.raises(ProblemFileError, match="cannot read the problem file"):
        import_humaneval(str(tmp_path / "missing.jsonl"), str(tmp_path / "x"))
    assert main(["import", "humaneval", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "x")]) == 1
    assert "agentenv: error:" in capsys.readouterr().err


def test_ids_are_valid_gym_names_and_deterministic(tmp_path):
    assert gym_name("HumanEval/0") == "HumanEval_0"
    assert gym_name("Mini Eval/4-v2") == "Mini_Eval_4_v2"
    assert gym_name("/weird/") == "weird"
    lines = [json.dumps({"task_id": tid, "entry_point": "f", "prompt": "def f():\n", "canonical_solution": "    return 1\n",
                         "test": "def check(c):\n    assert c() == 1\n"}) for tid in ("a/b", "a_b", "a b")]
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n")
    first = import_humaneval(str(tmp_path / "p.jsonl"), str(tmp_path / "one"), suite="s")
    second = import_humaneval(str(tmp_path / "p.jsonl"), str(tmp_path / "two"), suite="s")
    names = [os.path.basename(p) for p in first.written]
    assert len(set(names)) == 3 and names[0] == "a_b.json"
    assert names == [os.path.basename(p) for p in second.written]
    for a, b in zip(first.written, second.written):
        assert open(a).read() == open(b).read()


def test_the_bundled_suite_is_the_import_of_the_fixture(tmp_path):
    report = import_humaneval(FIXTURE, str(tmp_path / "humaneval_mini"))
    for path in report.written:
        bundled = os.path.join(BUNDLED, "problems", os.path.basename(path))
        assert open(path).read() == open(bundled).read(), f"re-run: agentenv import humaneval {FIXTURE} --out {BUNDLED}"


# ---------------------------------------------------------------- the format's own decision

_OFFICIAL = r'''
import contextlib, faulthandler, io, json, os, shutil, signal, subprocess, sys, builtins, tempfile
job = json.load(sys.stdin)
real_stdout = os.dup(1)

class Timeout(Exception):
    pass

class NoRead(io.StringIO):
    def read(self, *a, **k): raise IOError
    def readline(self, *a, **k): raise IOError
    def readlines(self, *a, **k): raise IOError
    def readable(self, *a, **k): return False

def alarm(signum, frame):
    raise Timeout()

os.chdir(tempfile.mkdtemp())
faulthandler.disable()
builtins.exit = builtins.quit = None
for name in ("kill system putenv remove removedirs rmdir fchdir setuid fork forkpty killpg rename renames truncate "
             "replace unlink fchmod fchown chmod chown chroot lchflags lchmod lchown getcwd chdir").split():
    setattr(os, name, None)
shutil.rmtree = shutil.move = shutil.chown = None
subprocess.Popen = None
program = job["prompt"] + job["completion"] + "\n" + job["test"] + "\n" + "check(%s)" % job["entry_point"]
stream = NoRead()
try:
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        sys.stdin = stream
        signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, job["timeout"])
        try:
            exec(program, {})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    verdict = "passed"
except Timeout:
    verdict = "timed out"
except BaseException as exc:
    verdict = "failed"
os.write(real_stdout, ("VERDICT " + job["nonce"] + " " + verdict + "\n").encode())
'''


def official_verdict(problem: dict, completion: str, timeout: float) -> str:
    """The format's decision, re-implemented: run prompt + completion + test + check(entry_point) in a
    separate process with a time limit; it passed iff no exception was raised. No verdict in time
    (a hang, os._exit) counts as a timeout."""
    nonce = os.urandom(8).hex()
    job = {**problem, "completion": completion, "timeout": timeout, "nonce": nonce}
    try:
        out = subprocess.run([sys.executable, "-I", "-c", _OFFICIAL], input=json.dumps(job), capture_output=True,
                             text=True, timeout=timeout + 1)
    except subprocess.TimeoutExpired:
        return "timed out"
    for line in out.stdout.splitlines():
        if line.startswith(f"VERDICT {nonce} "):
            return line.split(" ", 2)[2]
    return "timed out"


def test_verdicts_match_the_format_harness_for_every_sample(imported):
    out, report = imported
    problems = {}
    for line in open(FIXTURE):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        problems.setdefault(doc["task_id"], doc)
    tasks = {load_task(p).metadata["original_task_id"]: load_task(p) for p in report.written}
    samples = [json.loads(line) for line in open(SAMPLES)]
    assert {s["expected"] for s in samples} == {"passed", "failed", "timed out"}
    envs: dict[str, CodingEnv] = {}
    mismatches = []
    try:
        for sample in samples:
            tid = sample["task_id"]
            if tid not in envs:
                envs[tid] = CodingEnv(tasks[tid], mode="single_shot")
            env = envs[tid]
            env.reset()
            _, reward, terminated, _, info = env.step(sample["completion"])
            assert terminated and not info["reward_masked"], info["infra_error"]
            official = official_verdict(problems[tid], sample["completion"], TIMEOUT)
            ours = "passed" if reward == 1.0 else "not passed"
            theirs = "passed" if official == "passed" else "not passed"
            expected = "passed" if sample["expected"] == "passed" else "not passed"
            if not ours == theirs == expected or official != sample["expected"]:
                mismatches.append((tid, sample["completion"], reward, official, sample["expected"]))
    finally:
        for env in envs.values():
            env.close()
    assert not mismatches


def _single_shot(tmp_path, problem: dict) -> CodingEnv:
    """A single-shot environment for one HumanEval-format record, imported under *tmp_path*."""
    source = tmp_path / "problem.jsonl"
    source.write_text(json.dumps(problem) + "\n")
    report = import_humaneval(str(source), str(tmp_path / "suite"), timeout_s=TIMEOUT)
    assert not report.bad, report.bad
    return CodingEnv(load_task(report.written[0]), mode="single_shot")


def _judge(env: CodingEnv, completion: str) -> tuple[str, float]:
    """The judge's output and the reward for *completion*, in a fresh episode of *env*."""
    env.reset()
    obs, reward, terminated, _, info = env.step(completion)
    assert terminated and not info["reward_masked"], info["infra_error"]
    return obs["output"], reward


def test_a_test_that_calls_the_function_by_name_calls_the_candidate(tmp_path):
    # HumanEval/33's test compares candidate(x) with sort_third(x): under the format's harness the name is
    # the completion's function, not the prompt's stub (which returns None)
    problem = {"task_id": "ByName/0", "entry_point": "sort_third",
               "prompt": "def sort_third(l: list):\n    \"\"\"Sort the values at indices divisible by three.\"\"\"\n",
               "canonical_solution": "    l = list(l)\n    l[::3] = sorted(l[::3])\n    return l\n",
               "test": "\n\ndef check(candidate):\n"
                       "    assert tuple(candidate([5, 3, -4, 8, -3, 9])) == tuple(sort_third([5, 3, -4, 8, -3, 9]))\n"
                       "    assert tuple(candidate([5, 6, 3, 4, 8, 9, 2])) == tuple([2, 6, 3, 4, 8, 9, 5])\n"}
    env = _single_shot(tmp_path, problem)
    try:
        for completion in (problem["canonical_solution"], "    return sorted(l)\n", "    return None\n"):
            _, reward = _judge(env, completion)
            official = official_verdict(problem, completion, TIMEOUT)
            assert ("passed" if reward == 1.0 else "not passed") == (
                "passed" if official == "passed" else "not passed"), (completion, reward, official)
            assert (reward == 1.0) == (completion == problem["canonical_solution"])
    finally:
        env.close()


def test_agentic_mode_judges_the_edited_solution_file(imported):
    out, report = imported
    task = load_task([p for p in report.written if p.endswith("MiniEval_2.json")][0])
    env = CodingEnv(task, mode="agentic")
    try:
        obs, _ = env.reset()
        assert "solution.py" in obs["prompt"] and ".humaneval" not in obs["prompt"]  # the tests stay hidden
        listing = env.step({"action": "list_files"})[0]["output"]
        assert ".humaneval" not in listing
        code = task.reference_files()["solution.py"]
        env.step({"action": "overwrite_file", "path": "solution.py", "content": code})
        # a fake judge planted by the agent is replaced by the real one before scoring
        env.step({"action": "overwrite_file", "path": ".humaneval/check.py", "content": "raise SystemExit(0)\n"})
        _, reward, terminated, _, info = env.step({"action": "submit"})
        assert terminated and reward == 1.0
        env.reset()
        env.step({"action": "overwrite_file", "path": ".humaneval/check.py", "content": "raise SystemExit(0)\n"})
        assert env.step({"action": "submit"})[1] == 0.0
    finally:
        env.close()


# ---------------------------------------------------------------- the test stays the judge's

# Completions that solve nothing: they find the hidden test and answer each call from its asserts
# (``assert candidate(ARGS) == EXPECTED``), which works for any problem of the format.
_ANSWER_FROM_THE_TEST = '''
    _args = list(locals().values())
    import ast as _ast
    _problem = _find()
    if _problem is None:
        return None
    _ns = {}
    for _node in _ast.walk(_ast.parse(_problem["test"])):
        if (isinstance(_node, _ast.Assert) and isinstance(_node.test, _ast.Compare)
                and isinstance(_node.test.left, _ast.Call) and getattr(_node.test.left.func, "id", "") == "candidate"):
            try:
                _call = [eval(compile(_ast.Expression(a), "t", "eval"), _ns) for a in _node.test.left.args]
                _expected = eval(compile(_ast.Expression(_node.test.comparators[0]), "t", "eval"), _ns)
            except Exception:
                continue
            if _call == _args:
                return _expected
    return None


'''
_FROM_THE_JUDGES_MEMORY = _ANSWER_FROM_THE_TEST + '''def _find():
    import gc, sys
    frame = sys._getframe()
    while frame is not None:  # the candidate is a fork of the judge: its callers' frames are the judge's
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and "test" in value:
                return value
        frame = frame.f_back
    for value in gc.get_objects():
        if isinstance(value, dict) and "test" in value and "entry_point" in value:
            return value
'''
_FROM_THE_HIDDEN_FILE = _ANSWER_FROM_THE_TEST + '''def _find():
    import glob, json
    for path in glob.glob("/app/.humaneval/*.json") + glob.glob("/app/**/*.json", recursive=True):
        try:
            return json.load(open(path))
        except Exception:
            pass
'''
_THE_JUDGES_MEMORY_FILE = '''    return None


import os as _os
try:
    open("/proc/%d/mem" % _os.getppid(), "rb", buffering=0).close()
    _os.write(1, b"opened the judge's memory\\n")
except OSError as _exc:
    _os.write(1, ("refused: %s\\n" % type(_exc).__name__).encode())
'''


@pytest.mark.parametrize("completion", [_FROM_THE_JUDGES_MEMORY, _FROM_THE_HIDDEN_FILE],
                         ids=["from the judge's memory", "from the hidden file"])
def test_the_candidate_cannot_answer_from_the_hidden_test(imported, completion):
    # Before: the candidate, a fork of the judge made after the judge had read the test, found it in
    # its callers' frames, or read problem.json from the disk, and scored every problem full marks.
    out, report = imported
    env = CodingEnv(load_task([p for p in report.written if p.endswith("MiniEval_2.json")][0]), mode="single_shot")
    try:
        env.reset()
        _, reward, terminated, _, info = env.step(completion)
        assert terminated and not info["reward_masked"], info["infra_error"]
        assert reward == 0.0
    finally:
        env.close()


def test_the_candidate_cannot_open_the_judges_memory(imported):
    # The judge stops being dumpable before it forks the candidate; before, it did so just after, and
    # a candidate scheduled first (12 of 150 times on a loaded machine) opened /proc/<judge>/mem.
    out, report = imported
    env = CodingEnv(load_task([p for p in report.written if p.endswith("MiniEval_2.json")][0]), mode="single_shot")
    try:
        env.reset()
        obs, reward, _, _, info = env.step(_THE_JUDGES_MEMORY_FILE)
        assert "refused: PermissionError" in obs["output"] and reward == 0.0, obs["output"]
    finally:
        env.close()


def _on_the_host(tmp_path) -> dict:
    """The environment of a judge run on the host: the working folder its candidate makes (a sandbox's
    /tmp goes with the sandbox) is the test's own, not one more in the host's /tmp."""
    return {**os.environ, "TMPDIR": str(tmp_path)}


def test_the_judge_is_not_dumpable_when_it_forks(tmp_path):
    # Deterministic form of the test above: the judge's own process, at the moment it forks.
    from agentenv.builtin.authoring.humaneval import HARNESS
    (tmp_path / "check.py").write_text(HARNESS)
    (tmp_path / "problem.json").write_text(json.dumps({"task_id": "T/0", "entry_point": "f", "prompt": "",
                                                       "test": "def check(candidate):\n    assert candidate(1) == 1\n",
                                                       "timeout_s": 3.0}))
    (tmp_path / "solution.py").write_text("def f(x):\n    return x\n")
    probe = ("import ctypes, os, runpy, sys\n"
             "real = os.fork\n"
             "def fork():\n"
             "    print('dumpable at fork:', ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), flush=True)\n"
             "    return real()\n"
             "os.fork = fork\n"
             "sys.argv = [sys.argv[1], sys.argv[2]]\n"
             "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "check.py"), str(tmp_path / "solution.py")],
                          capture_output=True, text=True, timeout=60, env=_on_the_host(tmp_path))
    assert "dumpable at fork: 0" in proc.stdout and proc.returncode == 0, (proc.stdout, proc.stderr)


# ---------------------------------------------------------------- nothing of the workspace is imported

_PLANTS_COLORSYS = '''    return x


import os as _os
with open("/app/.humaneval/colorsys.py", "w") as _f:  # the judge's own folder, writable by the candidate
    _f.write("import os\\nos.write(1, b'the planted module ran\\\\n')\\nos._exit(0)\\n")
_os.write(1, b"planted\\n")
'''


def test_a_module_the_candidate_plants_beside_the_judge_is_never_imported(tmp_path):
    # Before: `python /app/.humaneval/check.py` had its own folder first on sys.path, and the candidate
    # can write it. A module planted there from the child was what the test imported, in the judge,
    # and its os._exit(0) scored this wrong answer 1.0 (deterministic here: the test imports the module
    # only after the first reply, when the candidate's code has run; the red team raced the judge).
    problem = {"task_id": "Plant/0", "entry_point": "double", "prompt": "def double(x):\n    \"\"\"2 * x\"\"\"\n",
               "canonical_solution": "    return 2 * x\n",
               "test": "import sys\n\n\ndef check(candidate):\n    candidate(1)\n    import colorsys\n"
                       "    assert not [p for p in sys.path if p.startswith('/app')], sys.path\n"
                       "    assert candidate(3) == 6\n"}
    env = _single_shot(tmp_path, problem)
    try:
        output, reward = _judge(env, _PLANTS_COLORSYS)
        assert "planted" in output and "the planted module ran" not in output, output
        assert reward == 0.0 and "Plant/0: failed" in output, output
        assert _judge(env, problem["canonical_solution"])[1] == 1.0
    finally:
        env.close()


@pytest.mark.parametrize("flags", [[], ["-P"], ["-I"]], ids=["plain", "-P", "-I"])
def test_the_judge_takes_only_its_own_folder_off_sys_path(tmp_path, flags):
    # Under -P, PYTHONSAFEPATH or -I the script's folder is not sys.path[0]: nothing else goes.
    from agentenv.builtin.authoring.humaneval import HARNESS
    base = subprocess.run([sys.executable, *flags, "-c", "import json, sys; print(json.dumps(sys.path))"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    expected = [p for p in json.loads(base.stdout) if p]  # -c puts '' (the cwd) where a script puts its folder
    (tmp_path / "check.py").write_text(HARNESS)
    (tmp_path / "problem.json").write_text(json.dumps({
        "task_id": "T/0", "entry_point": "f", "prompt": "", "timeout_s": 3.0,
        "test": "import sys\n\ndef check(candidate):\n    assert sys.path == %r, sys.path\n" % (expected,)}))
    (tmp_path / "solution.py").write_text("def f(x):\n    return x\n")
    proc = subprocess.run([sys.executable, *flags, str(tmp_path / "check.py"), str(tmp_path / "solution.py")],
                          capture_output=True, text=True, timeout=60, env=_on_the_host(tmp_path))
    assert proc.returncode == 0 and "T/0: passed" in proc.stdout, (proc.stdout, proc.stderr)


# ---------------------------------------------------------------- subclasses of built-in types

# One entry point that returns, for each kind, the value the test expects: the good completion returns
# each as a subclass of that value's type, each liar returns one wrong value dressed to look right.
_PLAIN = {"task_id": "Plain/0", "entry_point": "plain",
          "prompt": "def plain(kind):\n    \"\"\"The value the test names by kind.\"\"\"\n",
          "canonical_solution": "    return {'dict': {'a': 2, 'b': 1}, 'ordered': {'b': 1, 'a': 2}, 'list': [1, 2],\n"
                                "            'tuple': (1, 3), 'int': -1, 'str': 'abc', 'float': 0.5, 'set': {1, 2},\n"
                                "            'nested': [{'a': 2}]}[kind]\n",
          "test": "\n\ndef check(candidate):\n"
                  "    assert candidate('dict') == {'a': 2, 'b': 1}\n"
                  "    assert list(candidate('ordered').items()) == [('b', 1), ('a', 2)]\n"
                  "    assert candidate('list') == [1, 2]\n"
                  "    assert candidate('tuple') == (1, 3)\n"
                  "    assert candidate('int') == -1\n"
                  "    assert candidate('str') == 'abc'\n"
                  "    assert candidate('float') == 0.5\n"
                  "    assert candidate('set') == {1, 2}\n"
                  "    assert candidate('nested') == [{'a': 2}]\n"}
_SUBCLASSES = '''    import collections, enum
    class Sign(enum.IntEnum):
        NEGATIVE = -1
    class Word(str):
        pass
    class Pair(list):
        pass
    class Half(float):
        pass
    class Bag(set):
        pass
    ordered = collections.OrderedDict(a=2, b=1)
    ordered.move_to_end("a")
    counts = collections.defaultdict(int)
    counts["a"] += 2
    MinMax = collections.namedtuple("MinMax", "low high")
    return {"dict": collections.Counter("aab"), "ordered": ordered, "list": Pair([1, 2]), "tuple": MinMax(1, 3),
            "int": Sign.NEGATIVE, "str": Word("abc"), "float": Half(0.5), "set": Bag({1, 2}),
            "nested": [counts]}[kind]
'''
_ANSWERS = (_PLAIN["canonical_solution"].replace("    return ", "    answers = ", 1).replace("}[kind]", "}")
            + "    return LIAR if kind == KIND else answers[kind]\n")
_LIARS = {
    "an always-equal dict": ("dict", "class D(dict):\n    __eq__ = lambda self, other: True\n"
                                     "    __ne__ = lambda self, other: False\n    __hash__ = None\n", "D(a=0)"),
    "a dict whose items lie": ("dict", "class D(dict):\n    items = lambda self: [('a', 2), ('b', 1)]\n"
                                       "    keys = lambda self: ['a', 'b']\n    __iter__ = lambda self: iter(['a', 'b'])\n"
                                       "    __getitem__ = lambda self, key: {'a': 2, 'b': 1}[key]\n"
                                       "    __len__ = lambda self: 2\n", "D(z=9)"),
    "an OrderedDict whose items lie": ("ordered", "import collections\nclass D(collections.OrderedDict):\n"
                                                  "    items = lambda self: [('b', 1), ('a', 2)]\n"
                                                  "    __iter__ = lambda self: iter(['b', 'a'])\n", "D(z=9)"),
    "a list whose __iter__ lies": ("list", "class L(list):\n    __iter__ = lambda self: iter([1, 2])\n"
                                           "    __eq__ = lambda self, other: True\n    __len__ = lambda self: 2\n",
                                   "L([9])"),
    "a tuple whose __iter__ lies": ("tuple", "class T(tuple):\n    __iter__ = lambda self: iter((1, 3))\n", "T((0, 0))"),
    "an int whose __int__ lies": ("int", "class I(int):\n    __int__ = __index__ = lambda self: -1\n"
                                         "    __eq__ = lambda self, other: True\n    __hash__ = int.__hash__\n", "I(7)"),
    "a str whose __str__ lies": ("str", "class S(str):\n    __str__ = lambda self: 'abc'\n"
                                        "    __eq__ = lambda self, other: True\n    __hash__ = str.__hash__\n", "S('xyz')"),
    "a float whose __repr__ lies": ("float", "class F(float):\n    __repr__ = __float__ = lambda self: 0.5\n", "F(0.25)"),
}


# Subclasses whose value, as crossed, would hold less than the candidate's: not judged, a failure.
_UNJUDGED = {
    "an OrderedDict with an entry its order lacks": (
        "dict", "import collections\n",
        "(lambda d: (dict.__setitem__(d, 'z', 9), d)[1])(collections.OrderedDict(a=2, b=1))"),
    "a set of members apart by their own hash": ("set", "class I(int):\n    __hash__ = lambda self: 7\n", "{1, I(1), 2}"),
    "a dict of keys apart by their own hash": ("dict", "class S(str):\n    __hash__ = lambda self: 7\n",
                                               "{'a': 2, S('a'): 2, 'b': 1}"),
}


def test_a_value_that_would_lose_members_as_it_crosses_is_not_judged(tmp_path):
    # Each holds one member more than the expected answer (the format's harness fails it), which
    # crossing as built-in values would have dropped: an OrderedDict's order list without an entry
    # dict.__setitem__ added, members that only their own __hash__ keeps apart.
    env = _single_shot(tmp_path, _PLAIN)
    try:
        for name, (kind, classes, value) in _UNJUDGED.items():
            completion = ("\n".join("    " + line for line in classes.splitlines()) + "\n"
                          + _ANSWERS.replace("LIAR", value).replace("KIND", repr(kind)))
            assert official_verdict(_PLAIN, completion, TIMEOUT) != "passed", name
            output, reward = _judge(env, completion)
            assert reward == 0.0 and "cannot be judged" in output, (name, output)
    finally:
        env.close()


def test_values_of_subclasses_of_built_in_types_keep_full_marks(tmp_path):
    # Before: only exact built-in types crossed, so a correct Counter, OrderedDict, defaultdict,
    # namedtuple, IntEnum or str subclass scored 0 ("a value of type Counter cannot be judged"), where
    # the format's harness, comparing in one process, passes them all.
    assert official_verdict(_PLAIN, _SUBCLASSES, TIMEOUT) == "passed"
    env = _single_shot(tmp_path, _PLAIN)
    try:
        output, reward = _judge(env, _SUBCLASSES)
        assert reward == 1.0, output
    finally:
        env.close()


def test_a_subclass_that_lies_about_its_value_still_fails(tmp_path):
    # A subclass crosses as the value it stores, read with its base type's methods: what its own
    # __eq__, __iter__, items, __str__ or __int__ claim does not count.
    env = _single_shot(tmp_path, _PLAIN)
    try:
        assert _judge(env, _PLAIN["canonical_solution"])[1] == 1.0
        for name, (kind, classes, liar) in _LIARS.items():
            completion = ("\n".join("    " + line for line in classes.splitlines()) + "\n"
                          + _ANSWERS.replace("LIAR", liar).replace("KIND", repr(kind)))
            output, reward = _judge(env, completion)
            assert reward == 0.0 and output.endswith("Plain/0: failed: "), (name, output)  # the assert
    finally:
        env.close()


# ---------------------------------------------------------------- what crosses, and what a test catches

def _problem(name: str, prompt: str, test: str, entry: str) -> dict:
    return {"task_id": name, "entry_point": entry, "prompt": prompt, "test": test, "canonical_solution": ""}


_ROOT = "def root(x):\n    \"\"\"The integer square root of x; an error below zero.\"\"\"\n"
_RAISES = ("def check(candidate):\n    try:\n        candidate(-1)\n    except Exception:\n        pass\n"
           "    else:\n        raise AssertionError('no error')\n")
# A test that says "it raises" with a broad except took whatever the judge raised in the candidate's
# place for the error it expected: a value that could not cross, an exception the format's harness
# would not catch there (SystemExit), a candidate that exited, a solution whose own code failed. Each
# wrong answer below scored 1.0 (red team, stop 39); the format's harness fails every one.
_WRONG = {
    "returns an iterator instead of raising": (_ROOT, _RAISES, "root",
                                               "    if x < 0:\n        return iter([])\n    return int(x ** 0.5)\n"),
    "returns a function instead of raising": (_ROOT, _RAISES, "root",
                                              "    if x < 0:\n        return len\n    return int(x ** 0.5)\n"),
    "exits instead of raising": (_ROOT, _RAISES, "root",
                                 "    if x < 0:\n        import os\n        os._exit(0)\n    return int(x ** 0.5)\n"),
    "raises SystemExit": (_ROOT, _RAISES, "root", "    if x < 0:\n        raise SystemExit(0)\n    return int(x ** 0.5)\n"),
    "its own code fails as it runs": (_ROOT, _RAISES, "root", "    return int(x ** 0.5)\n\n\nraise ValueError('at import')\n"),
    "its own code fails, and the test calls nothing": (_ROOT, "def check(candidate):\n    pass\n", "root",
                                                       "    return 0\n\n\nraise ValueError('at import')\n"),
    # what the candidate does to its argument is the test's to see, and an OrderedDict's order is its value
    "sorts the list it was given": ("def least(xs):\n    \"\"\"The least of xs, which it leaves as it is.\"\"\"\n",
                                    "def check(candidate):\n    xs = [3, 1, 2]\n    assert candidate(xs) == 1\n"
                                    "    assert xs == [3, 1, 2]\n", "least", "    xs.sort()\n    return xs[0]\n"),
    # an exception class made in the function, named as the prompt's, is not the prompt's (red team, stop 39)
    "raises its own error of the prompt's error's name": (
        "class Invalid(Exception):\n    pass\n\n\n" + _ROOT,
        "def check(candidate):\n    try:\n        candidate(-1)\n    except Invalid:\n        pass\n",
        "root", "    class Invalid(Exception):\n        pass\n    raise Invalid(x)\n"),
    "an OrderedDict in the wrong order": ("def order(pairs):\n    \"\"\"An OrderedDict of pairs, in order.\"\"\"\n",
                                          "import collections\n\n\ndef check(candidate):\n"
                                          "    assert candidate([(1, 2), (3, 4)]) == collections.OrderedDict([(1, 2), (3, 4)])\n",
                                          "order", "    import collections\n    return collections.OrderedDict(reversed(pairs))\n"),
}
_KINDS = '''    import collections, decimal, fractions
    Span = collections.namedtuple("Span", "low high")
    counts = collections.Counter(a=1)
    counts["b"] = 0
    return {"keys": {"a": 1}.keys(), "items": {"a": 1}.items(), "range": range(1, 10, 2),
            "deque": collections.deque([1, 2], maxlen=3), "counter": counts, "span": Span(1, 3),
            "fraction": fractions.Fraction(1, 3), "decimal": decimal.Decimal("1.10"), "big": 10 ** 5000,
            "grouped": collections.defaultdict(list), "map": map(str, [1, 2])}[kind]
'''
# Correct answers the format's harness passes that agentenv scored 0 (red team, stop 39): values of the
# standard library's types (HumanEval/33 and /37: a generator under `tuple(candidate(...))`), keyword
# arguments, the error class the test names, an argument changed in place as asked, a prompt that
# ends at its signature.
_RIGHT = {
    "a generator": ("def evens(xs):\n    \"\"\"The even members of xs.\"\"\"\n",
                    "def check(candidate):\n    assert tuple(candidate([1, 2, 3, 4])) == (2, 4)\n"
                    "    assert next(candidate([5, 6])) == 6\n", "evens", "    return (x for x in xs if x % 2 == 0)\n"),
    "the standard library's types": (
        "def kinds(kind):\n    \"\"\"A value of the kind named.\"\"\"\n",
        "import collections, fractions\n\n\ndef check(candidate):\n"
        "    assert set(candidate('keys')) == {'a'} and list(candidate('items')) == [('a', 1)]\n"
        "    assert len(candidate('range')) == 5 and candidate('range')[1] == 3\n"
        "    assert candidate('deque').maxlen == 3 and list(candidate('deque')) == [1, 2]\n"
        "    assert candidate('counter') == collections.Counter(a=1) and candidate('counter').most_common(1) == [('a', 1)]\n"
        "    assert candidate('span').high == 3 and candidate('span') == (1, 3)\n"
        "    assert candidate('fraction') * 3 == 1 and str(candidate('decimal')) == '1.10'\n"
        "    assert candidate('big') == 10 ** 5000 and candidate('grouped')['x'] == []\n"
        "    assert list(candidate('map')) == ['1', '2']\n", "kinds", _KINDS),
    "keyword arguments": ("def scale(xs, factor=1):\n    \"\"\"xs times factor.\"\"\"\n",
                          "def check(candidate):\n    assert candidate([1, 2], factor=3) == [3, 6]\n"
                          "    assert candidate(xs=[2]) == [2]\n", "scale", "    return [x * factor for x in xs]\n"),
    "the error the test names": (
        "class Negative(ValueError):\n    pass\n\n\n" + _ROOT,
        "def check(candidate):\n    for kind in (Negative, ValueError):\n        try:\n            candidate(-1)\n"
        "        except kind:\n            pass\n        else:\n            raise AssertionError(kind)\n"
        "    try:\n        candidate(None)\n    except TypeError as exc:\n        assert 'NoneType' in str(exc)\n",
        "root", "    if x is not None and x < 0:\n        raise Negative(x)\n    return int(x ** 0.5)\n"),
    "an argument sorted in place, as asked": (
        "def sort_all(rows):\n    \"\"\"Sort each row of rows in place.\"\"\"\n",
        "def check(candidate):\n    row = [3, 1]\n    rows = [row, [2, 0]]\n    assert candidate(rows) is None\n"
        "    assert rows == [[1, 3], [0, 2]] and rows[0] is row\n", "sort_all", "    for row in rows:\n        row.sort()\n"),
    "arguments changed in place, nan and tuples in them kept": (
        "def grow(xs, extra=None):\n    \"\"\"Append 1 to xs, and to extra.\"\"\"\n",
        "import math\n\n\ndef check(candidate):\n    nan, inner = float('nan'), [0]\n    xs = [nan, (inner,)]\n"
        "    extra = [2]\n    candidate(xs, extra=extra)\n    assert xs[0] is nan and xs[1][0] is inner and inner == [0, 1]\n"
        "    assert len(xs) == 3 and extra == [2, 1]\n", "grow",
        "    xs[1][0].append(1)\n    xs.append(1)\n    extra.append(1)\n"),
    "errors with their arguments, lazily raised, under threads": (
        "def pick(d, key):\n    \"\"\"d[key], or a KeyError.\"\"\"\n",
        "import collections, threading\n\n\ndef check(candidate):\n    try:\n        candidate({}, 'x')\n"
        "    except KeyError as exc:\n        assert exc.args == ('x',)\n    else:\n        raise AssertionError\n"
        "    it = candidate({'a': 1}, 'lazy')\n    assert next(it) == 1\n    try:\n        next(it)\n"
        "    except ValueError:\n        pass\n    else:\n        raise AssertionError\n"
        "    assert list(candidate(collections.OrderedDict(b=1), 'keys')) == ['b']\n    found = []\n"
        "    threads = [threading.Thread(target=lambda i=i: found.append(candidate({i: i}, i) == i)) for i in range(8)]\n"
        "    [t.start() for t in threads]\n    [t.join() for t in threads]\n    assert found == [True] * 8\n", "pick",
        "    if key == 'lazy':\n        def gen():\n            yield 1\n            raise ValueError('later')\n"
        "        return gen()\n    if key == 'keys':\n        return d.keys()\n    return d[key]\n"),
    "an error class of the task's whose constructor calls the candidate": (
        "class Negative(ValueError):\n    def __init__(self, *args):\n        super().__init__(*args)\n"
        "        self.of_four = CALLS[0](4) if CALLS else None\n\n\nCALLS = []\n\n\n" + _ROOT,
        "def check(candidate):\n    CALLS.append(candidate)\n    try:\n        candidate(-1)\n"
        "    except Negative as exc:\n        assert exc.of_four == 2\n    else:\n        raise AssertionError\n"
        "    assert candidate(16) == 4\n", "root",
        "    if x < 0:\n        raise Negative(x)\n    return int(x ** 0.5)\n"),
    "a prompt without a docstring": ("def inc(x):\n", "def check(candidate):\n    assert candidate(1) == 2\n", "inc",
                                     "    return x + 1\n"),
}


def _verdicts(tmp_path, cases: dict) -> dict:
    """{name: (agentenv's reward, the judge's output, the format's verdict)} for each case."""
    source = tmp_path / "cases.jsonl"
    problems = {name: {**_problem(f"Case/{i}", prompt, test, entry), "canonical_solution": completion}
                for i, (name, (prompt, test, entry, completion)) in enumerate(cases.items())}
    source.write_text("".join(json.dumps(p) + "\n" for p in problems.values()))
    report = import_humaneval(str(source), str(tmp_path / "suite"), timeout_s=TIMEOUT)
    assert not report.bad, report.bad
    found = {}
    for (name, problem), path in zip(problems.items(), report.written):
        task = load_task(path)
        assert task.reference_code() == problem["canonical_solution"]  # (the completion, not the prompt again)
        env = CodingEnv(task, mode="single_shot")
        try:
            output, reward = _judge(env, task.reference_code())
        finally:
            env.close()
        found[name] = (reward, output.splitlines()[-1], official_verdict(problem, problem["canonical_solution"], TIMEOUT))
    return found


def test_a_test_that_catches_any_exception_cannot_be_passed_by_what_the_judge_raises(tmp_path):
    found = _verdicts(tmp_path, _WRONG)
    assert {name: (r, theirs) for name, (r, _, theirs) in found.items() if r != 0.0 or theirs == "passed"} == {}, found


def test_values_errors_and_arguments_of_correct_answers_cross_as_in_the_formats_harness(tmp_path):
    found = _verdicts(tmp_path, _RIGHT)
    assert {name: v for name, v in found.items() if v[0] != 1.0 or v[2] != "passed"} == {}, found


def test_a_judge_whose_text_is_not_agentenvs_runs_its_own_text(tmp_path):
    # A seed compiles agentenv's own judge once for every sandbox, and a command that runs that path
    # with that very text takes the compiled code: a task's check.py of other text must run as written.
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({**_problem("Own/0", _ROOT, "def check(candidate):\n    assert candidate(9) == 3\n",
                                             "root"), "canonical_solution": "    return int(x ** 0.5)\n"}) + "\n")
    report = import_humaneval(str(source), str(tmp_path / "suite"), timeout_s=TIMEOUT)
    with open(report.written[0]) as f:
        doc = json.load(f)
    for text, printed in ((None, "Own/0: passed"), ("print('the task\\'s own text ran')\n", "the task's own text ran")):
        if text is not None:
            doc["hidden_files"]["files"][".humaneval/check.py"] = text + doc["hidden_files"]["files"][".humaneval/check.py"]
        path = tmp_path / f"task{bool(text)}.json"
        path.write_text(json.dumps(doc))
        env = CodingEnv(load_task(str(path)), mode="single_shot")
        try:
            output, reward = _judge(env, "    return int(x ** 0.5)\n")
        finally:
            env.close()
        assert reward == 1.0 and printed in output, output
