"""Importing problem sets into task suites: the HumanEval format (``agentenv import humaneval``).

A HumanEval-format file holds one JSON object a line (optionally gzip-compressed) with ``task_id``,
``prompt``, ``canonical_solution``, ``test`` and ``entry_point``. Each record becomes one task:

* single-shot, the action is the *completion*: the task's step writes ``prompt + completion`` to
  ``/app/solution.py``, exactly the concatenation the format's harness executes; agentic, the
  agent edits ``solution.py`` (which starts as the prompt) and submits;
* the score is 1 when ``check(entry_point)`` passes within the per-problem timeout, else 0. The
  judging script (a hidden file, never in the agent's workspace) keeps the candidate and the
  verdict in two processes: the candidate's code runs in a forked child the way the format's own
  harness runs it (a fresh temporary directory, the same destructive functions disabled,
  stdout/stderr swallowed, stdin unreadable, a ``SIGALRM`` time limit, killed at the end), while
  the test's ``check`` runs in the parent, which never executes the candidate's code: each call of
  ``candidate(...)`` sends its arguments to the child and receives the result as tagged JSON of
  exact built-in types (a subclass's value, a ``Counter``'s or an ``IntEnum``'s, as its base
  type's, read with the base type's own methods). An object that claims to equal anything cannot
  cross, a patched ``AssertionError`` or ``os._exit`` in the child cannot reach the verdict, and a
  child that hangs or dies fails. The child never holds the test: it is forked before the parent reads
  ``problem.json``, which the parent removes before the child's code runs, and the parent is not
  dumpable from before the fork (no ``/proc/<pid>/mem`` of it can be opened). Neither imports a
  module from the workspace: the script's own folder (``sys.path[0]``, writable by the candidate)
  and any other entry inside the workspace leave ``sys.path`` before the judge's first import;
* the reference solution is ``prompt + canonical_solution``.

Task ids are ``<suite>.<task_id>`` with every character outside ``[A-Za-z0-9_.]`` replaced by
``_`` (``HumanEval/0`` -> ``humaneval.HumanEval_0``); a clash after that gets a suffix from the
original id's hash, so the same file always yields the same ids. A bad record is reported with its
line number and skipped; the others are still imported.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from agentenv import DEFAULT_PROTECTED, PLACEHOLDER, ProblemFileError, parse_task

FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
HARNESS_DIR = ".humaneval"
DEFAULT_TIMEOUT_S = 3.0  # what the format's evaluate_functional_correctness uses
SOLUTION = "solution.py"
PROBLEMS_DIR = "problems"  # task files live below the suite, away from suite.json

# The judge. It runs inside the sandbox; it is data written into every task, so it imports only the
# standard library. The sequence (fork, tempdir, guard, swallow_io, time_limit, exec, BaseException)
# mirrors the format's harness so that verdicts agree.
HARNESS = r'''"""Decide a HumanEval-format verdict for one solution file; exit 0 iff it passed."""
import os  # both are loaded before any script runs (os by site, frozen from 3.11): no path is searched
import sys


def _untrusted_folders():
    """The workspace, which the candidate can write (this script's folder is .humaneval in it), and
    this folder, as named and resolved: sys.path[0] is the script's resolved folder."""
    folders = set()
    for here in {os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.realpath(__file__))}:
        folders.update((here, os.path.dirname(here)))
    return [f for f in folders if os.path.dirname(f) != f]  # never the file system's root


def _inside(entry, folders):
    # by name: an entry's realpath would cost ~20 us each, and the entries besides sys.path[0] come
    # from the runtime and the task, not from the candidate
    path = os.path.abspath(entry or ".")
    return any(path == f or path.startswith(f + os.sep) for f in folders)


# `python check.py` puts this script's folder first on sys.path, and the candidate can write it: a
# copy.py or string.py it planted there from the child was what the test's check() imported, in
# this process, after the fork (its os._exit(0) scored a wrong answer 1.0). So before any other
# import, no entry in the workspace stays on the path: this folder, where it is sys.path[0] (under
# -P, PYTHONSAFEPATH or -I it is not there, and then nothing else is removed), and any other. The
# command stays `python check.py`, without -I: only a plain command is served warm.
_UNTRUSTED = _untrusted_folders()
sys.path[:] = [entry for entry in sys.path if not _inside(entry, _UNTRUSTED)]

import builtins
import collections
import contextlib
import faulthandler
import io
import json
import select
import signal
import time
import typing  # noqa: F401  (most solutions import it: loaded once here, as in the format's harness)


class TimeLimitReached(Exception):
    pass


class _WriteOnly(io.StringIO):
    def read(self, *args, **kwargs):
        raise IOError

    def readline(self, *args, **kwargs):
        raise IOError

    def readlines(self, *args, **kwargs):
        raise IOError

    def readable(self, *args, **kwargs):
        return False


class _redirect_stdin(contextlib._RedirectStream):
    _stream = "stdin"


@contextlib.contextmanager
def _time_limit(seconds):
    def on_alarm(signum, frame):
        raise TimeLimitReached("Timed out!")

    signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


_DISABLED = {
    "os": ("kill system putenv remove removedirs rmdir fchdir setuid fork forkpty killpg rename renames "
           "truncate replace unlink fchmod fchown chmod chown chroot lchflags lchmod lchown getcwd chdir"),
    "shutil": "rmtree move chown",
}


def _guard():
    # Destructive calls fail in the judged code as they do under the format's own harness.
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    builtins.help = None
    os.environ["OMP_NUM_THREADS"] = "1"
    import shutil
    import subprocess

    modules = {"os": os, "shutil": shutil}
    for module, names in _DISABLED.items():
        for name in names.split():
            setattr(modules[module], name, None)
    subprocess.Popen = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


# Values cross between the candidate and the judge as tagged JSON, of exact built-in types only:
# an object that claims to equal anything cannot cross, and the comparison runs in the judge. A value
# of a subclass of a built-in type (a Counter, an OrderedDict, a namedtuple, an IntEnum) crosses as the
# base type's value, as the format's harness compares it (a correct Counter scored 0 when only exact
# types crossed). It is read with the base type's own methods (dict.items, list.__iter__, str.__str__,
# int.__int__, float.__repr__, ...), never the value's, so an override of __eq__, __iter__, items,
# __str__ or __int__ neither runs in the judge nor changes what crosses: the stored value does.
_LIMIT = 16 << 20


def _items(value):
    items = list(dict.items(value))  # what == compares
    if issubclass(type(value), collections.OrderedDict):
        # an OrderedDict's order is its own list's (move_to_end changes that, not the dict's); one
        # whose list does not hold exactly its entries (dict.__setitem__ adds none to it) would cross
        # without them
        ordered = list(collections.OrderedDict.items(value))
        if len(ordered) != len(items) or {id(k) for k, _ in ordered} != {id(k) for k, _ in items}:
            raise TypeError("an OrderedDict whose order does not hold its entries cannot be judged")
        return ordered
    return items


def _encode(value, depth=0):
    kind = type(value)  # type(), not isinstance(): a __class__ property cannot claim a base
    if depth > 200:
        raise TypeError("a value nested more than 200 deep")
    if value is None or kind is bool:
        return value
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, float):
        return {"~": "float", "v": float.__repr__(value)}
    if issubclass(kind, list):
        return [_encode(v, depth + 1) for v in list.__iter__(value)]
    if issubclass(kind, dict):
        return {"~": "dict", "v": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in _items(value)]}
    for base in (tuple, set, frozenset):
        if issubclass(kind, base):
            return {"~": base.__name__, "v": [_encode(v, depth + 1) for v in base.__iter__(value)]}
    if issubclass(kind, bytes):
        return {"~": "bytes", "v": bytes.hex(value)}
    if issubclass(kind, complex):
        return {"~": "complex", "v": [float.__repr__(complex.real.__get__(value)),
                                      float.__repr__(complex.imag.__get__(value))]}
    raise TypeError("a value of type %s cannot be judged (only built-in data types cross)" % kind.__name__)


def _decode(doc):
    if isinstance(doc, list):
        return [_decode(v) for v in doc]
    if not isinstance(doc, dict):
        return doc
    kind, v = doc["~"], doc["v"]
    if kind == "float":
        return float(v)
    if kind == "tuple":
        return tuple(_decode(x) for x in v)
    if kind in ("set", "frozenset", "dict"):
        # members the candidate's subclasses kept apart (a hash of their own) but equal as the values
        # they hold: the collection would shrink here and pass where the format's harness fails it
        if kind == "dict":
            value = {_decode(k): _decode(x) for k, x in v}
        else:
            value = {"set": set, "frozenset": frozenset}[kind](_decode(x) for x in v)
        if len(value) != len(v):
            raise ValueError("a %s whose members are equal as the values they hold cannot be judged" % kind)
        return value
    if kind == "bytes":
        return bytes.fromhex(v)
    if kind == "complex":
        return complex(float(v[0]), float(v[1]))
    raise ValueError("unknown tag %r" % (kind,))


def _send(fd, doc):
    data = json.dumps(doc).encode("utf-8", "surrogatepass")
    data = len(data).to_bytes(4, "big") + data
    while data:
        data = data[os.write(fd, data):]


def _receive(fd, deadline=None):
    data = b""
    need = 4
    size = None
    while len(data) < need:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeLimitReached("Timed out!")
        chunk = os.read(fd, min(65536, need - len(data)))
        if not chunk:
            raise EOFError("the candidate's process ended")
        data += chunk
        if size is None and len(data) >= 4:
            size = int.from_bytes(data[:4], "big")
            if size > _LIMIT:
                raise ValueError("a value of more than 16 MB")
            data, need = data[4:], size
    return json.loads(data.decode("utf-8", "surrogatepass"))


def _candidate(solution, requests, replies):
    """The child: runs the candidate's code, and only that, answering calls with plain values.

    It was forked before the judge read the test, and it learns the entry point and the time limit
    over the pipe only once the test file is gone: nothing of the test is in its memory or on its disk."""
    try:
        job = _receive(requests)
    except BaseException:
        return
    _prctl(_PR_SET_DUMPABLE, 1)  # its own, as in the format's harness (the judge stays not dumpable)
    work = os.path.join(os.environ.get("TMPDIR") or "/tmp", "humaneval-%s" % os.urandom(8).hex())
    os.mkdir(work, 0o700)
    os.chdir(work)
    _guard()
    stream = _WriteOnly()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream), _redirect_stdin(stream):
        with _time_limit(job["timeout"]):
            try:
                namespace = {}
                exec(solution, namespace)
                function = namespace[job["entry_point"]]
                failure = None
            except BaseException as exc:
                failure = exc
            while True:
                try:
                    args = _decode(_receive(requests))
                except BaseException:
                    return
                try:
                    if failure is not None:
                        raise failure
                    reply = {"value": _encode(function(*args))}
                except TimeLimitReached:
                    raise
                except BaseException as exc:
                    reply = {"raised": type(exc).__name__, "message": str(exc)[:2000]}
                _send(replies, reply)


def _prctl(option, value):
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(%d, %d) failed" % (option, value))


_PR_SET_DUMPABLE = 4


class _CandidateError(Exception):
    pass


def main():
    tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "problem.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        solution = f.read()
    # Code in the child may never read or write this process's memory (/proc/<pid>/mem): not
    # dumpable from before the fork. Where that cannot be done, nothing is judged.
    _prctl(_PR_SET_DUMPABLE, 0)
    to_child, requests = os.pipe()[::-1]
    replies, from_child = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(to_child)
        os.close(replies)
        try:
            _candidate(solution, requests, from_child)
        finally:
            os._exit(0)
    os.close(requests)
    os.close(from_child)
    # The test is read only now, by this process alone, and removed before the candidate's code
    # runs: the child cannot find it in its memory (a fork of this process from before) or on disk.
    try:
        with open(tests, encoding="utf-8") as f:
            problem = json.load(f)
        os.unlink(tests)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    timeout = float(problem["timeout_s"])
    entry = problem["entry_point"]
    _send(to_child, {"entry_point": entry, "timeout": timeout})
    deadline = time.monotonic() + timeout + 1

    def candidate(*args):
        try:
            _send(to_child, _encode(list(args)))
        except OSError:
            raise _CandidateError("the candidate's process ended")
        reply = _receive(replies, deadline)
        if "raised" in reply:
            raise _CandidateError("%s: %s" % (reply["raised"], reply["message"]))
        return _decode(reply["value"])

    candidate.__name__ = entry
    stream = _WriteOnly()
    try:
        namespace = {}
        # the judge runs the task's own text only: the prompt (for helpers the test uses) and the test.
        # A test that calls the function by name (HumanEval/33) calls the candidate, as in the format's
        # harness, where the completion's definition replaces the prompt's stub.
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            exec(problem.get("prompt", ""), namespace)
            namespace[entry] = candidate
            exec(problem["test"], namespace)
            namespace["check"](candidate)
        verdict = "passed"
    except TimeLimitReached:
        verdict = "timed out"
    except BaseException as exc:
        verdict = "failed: %s" % (exc,)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    print("%s: %s" % (problem["task_id"], verdict))
    sys.exit(0 if verdict == "passed" else 1)


if __name__ == "__main__":
    main()
'''


@dataclass(frozen=True)
class BadRecord:
    file: str
    line: int
    field: str | None
    problem: str
    fix: str

    def __str__(self) -> str:
        where = f"field {self.field!r}: " if self.field else ""
        return f"{self.file}:{self.line}: {where}{self.problem}; {self.fix}"


@dataclass
class ImportReport:
    written: list[str] = field(default_factory=list)  # task files
    bad: list[BadRecord] = field(default_factory=list)
    suite_file: str | None = None


def gym_name(raw: str) -> str:
    """A valid task-id component for *raw*: ``[A-Za-z0-9_.]``, starting with a letter or digit."""
    name = re.sub(r"[^A-Za-z0-9_.]", "_", raw).strip("._") or "task"
    if not name[0].isalnum():
        name = "t" + name
    return name[:80]


def _unique(name: str, raw: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    return f"{name}_{hashlib.sha1(raw.encode()).hexdigest()[:8]}"


def read_records(path: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line of a .jsonl or .jsonl.gz file."""
    try:
        raw = gzip.open(path, "rb").read() if path.endswith(".gz") else open(path, "rb").read()
    except (OSError, EOFError) as exc:
        raise ProblemFileError(f"{path}: cannot read the problem file: {exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProblemFileError(f"{path}: not UTF-8 text (byte {exc.start}); a HumanEval file is JSON lines") from exc
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, line


def check_record(doc: Any, path: str, line: int) -> BadRecord | None:
    """Why *doc* is not a usable HumanEval record, or None."""
    def bad(field_name, problem, fix):
        return BadRecord(os.path.basename(path), line, field_name, problem, fix)

    if not isinstance(doc, dict):
        return bad(None, f"a record is a JSON object, found {type(doc).__name__}",
                   f"write one object per line with {', '.join(FIELDS)}")
    for name in FIELDS:
        if name not in doc:
            return bad(name, "missing", f"every record needs {', '.join(FIELDS)}")
        if not isinstance(doc[name], str) or (name in ("task_id", "entry_point", "test") and not doc[name].strip()):
            return bad(name, f"expected a non-empty string, found {doc[name]!r:.60}", "give it as a JSON string")
    if not doc["entry_point"].isidentifier():
        return bad("entry_point", f"{doc['entry_point']!r} is not a Python identifier",
                   "name the function that check() receives")
    try:
        tree = ast.parse(doc["prompt"] + doc["canonical_solution"])
    except SyntaxError as exc:
        return bad("canonical_solution", f"prompt + canonical_solution does not compile: {exc.msg} (line {exc.lineno})",
                   "the canonical solution must complete the prompt into valid Python")
    if not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == doc["entry_point"]
               or isinstance(n, ast.Assign) and any(getattr(t, "id", None) == doc["entry_point"] for t in n.targets)
               for n in tree.body):
        return bad("entry_point", f"{doc['entry_point']!r} is not defined by prompt + canonical_solution",
                   "use the name of the function the prompt defines")
    try:
        test_tree = ast.parse(doc["test"])
    except SyntaxError as exc:
        return bad("test", f"does not compile: {exc.msg} (line {exc.lineno})", "fix the test code")
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in test_tree.body):
        return bad("test", "defines no top-level function check(candidate)",
                   "the format calls check(entry_point); define it in 'test'")
    return None


def humaneval_task(doc: dict[str, Any], task_id: str, *, timeout_s: float, runtime: str,
                   source: str, line: int) -> dict[str, Any]:
    """The task document for one HumanEval record."""
    entry = doc["entry_point"]
    problem = {"task_id": doc["task_id"], "entry_point": entry, "prompt": doc["prompt"], "test": doc["test"],
               "timeout_s": timeout_s}
    return {
        "task_id": task_id,
        "version": 0,
        "description": (f"Complete the Python function `{entry}` in {SOLUTION} so that it does what its "
                        "docstring says. Single-shot, your reply is appended to the prompt below (the "
                        "HumanEval convention: send only the function body); hidden tests then call "
                        f"`{entry}`."),
        "environment_config": {"runtime": runtime, "dependencies": []},
        "workspace": {"root": "/app", "files": {SOLUTION: doc["prompt"]}},
        "protected_paths": [*DEFAULT_PROTECTED, f"{HARNESS_DIR}/**"],
        "hidden_files": {"files": {f"{HARNESS_DIR}/check.py": HARNESS,
                                   f"{HARNESS_DIR}/problem.json": json.dumps(problem, indent=1) + "\n"}},
        "execution_steps": [
            {"action": "overwrite_file", "path": f"/app/{SOLUTION}", "content": doc["prompt"] + PLACEHOLDER},
            {"action": "run_command", "command": f"python /app/{HARNESS_DIR}/check.py /app/{SOLUTION}",
             "timeout_s": timeout_s + 10},
        ],
        "reward_logic": {"type": "composite", "rules": [
            {"metric": "command_succeeded", "weight": 1.0, "aggregation": "last"}]},
        "limits": {"wall_time_s": timeout_s + 20, "memory_mb": 1024},
        "max_rounds": 10,
        "reference_solution": {"files": {SOLUTION: doc["prompt"] + doc["canonical_solution"]}},
        "tags": ["humaneval", "function-completion"],
        "expected_duration_s": 1.0,
        "metadata": {"format": "humaneval", "original_task_id": doc["task_id"], "entry_point": entry,
                     "source_file": os.path.basename(source), "source_line": line, "timeout_s": timeout_s},
    }


def _is_imported(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("metadata", {}).get("format") == "humaneval"
    except (OSError, ValueError, AttributeError):
        return False


def import_humaneval(path: str, out: str, *, suite: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                     runtime: str = "python3.11", progress: Any = None) -> ImportReport:
    """Write one task file per good record of *path* into the suite directory *out*.

    Every task is validated (``parse_task``) before it is written. Bad records are collected in the
    report with their line numbers. ``suite.json`` is (re)written with the suite's name.
    """
    suite = gym_name(suite or os.path.basename(os.path.normpath(out)))
    report = ImportReport()
    taken: set[str] = set()
    seen: dict[str, int] = {}
    docs: list[tuple[str, dict[str, Any]]] = []
    for line, text in read_records(path):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            report.bad.append(BadRecord(os.path.basename(path), line, None, f"not valid JSON: {exc.msg} at column "
                                        f"{exc.colno}", "write one complete JSON object per line"))
            continue
        problem = check_record(doc, path, line)
        if problem is None and doc["task_id"] in seen:
            problem = BadRecord(os.path.basename(path), line, "task_id", f"{doc['task_id']!r} already appears on line "
                                f"{seen[doc['task_id']]}", "give every record its own task_id")
        if problem is not None:
            report.bad.append(problem)
            continue
        seen[doc["task_id"]] = line
        name = _unique(gym_name(doc["task_id"]), doc["task_id"], taken)
        taken.add(name)
        task = humaneval_task(doc, f"{suite}.{name}", timeout_s=timeout_s, runtime=runtime, source=path, line=line)
        parse_task(task, source=f"{path}:{line}")  # a record that passed the checks must make a valid task
        docs.append((name, task))
    problems_dir = os.path.join(out, PROBLEMS_DIR)
    os.makedirs(problems_dir, exist_ok=True)
    for old in os.listdir(problems_dir):  # a re-import replaces the previous one, not adds to it
        full = os.path.join(problems_dir, old)
        if old.endswith(".json") and _is_imported(full):
            os.remove(full)
    for i, (name, task) in enumerate(docs, 1):
        target = os.path.join(problems_dir, f"{name}.json")
        with open(target, "w", encoding="utf-8") as f:
            json.dump(task, f, indent=1, ensure_ascii=False)
            f.write("\n")
        report.written.append(target)
        if progress:
            progress(i, len(docs), target)
    report.suite_file = os.path.join(out, "suite.json")
    with open(report.suite_file, "w") as f:
        json.dump({"name": suite, "version": "1.0.0",
                   "description": f"HumanEval-format problems imported from {os.path.basename(path)}",
                   "tasks": [f"{PROBLEMS_DIR}/*.json"]}, f, indent=1)
        f.write("\n")
    return report
