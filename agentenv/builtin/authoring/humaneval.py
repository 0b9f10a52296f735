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
  ``candidate(...)`` sends its arguments (keywords too) to the child and receives the result as
  tagged JSON, which the parent rebuilds as its own values: built-in data types and the standard
  library's (a ``Counter``, ``OrderedDict``, ``deque``, namedtuple, ``Fraction``, ``Decimal``,
  ``range``, a dict's views, an iterator as one over what it yielded), any other subclass of a
  built-in type as its base type's value, each read with the base type's own methods; what the
  call did to its arguments is done to the test's; an exception the function raised is raised as
  the task's own class of that name or the built-in class it derives from. An object that claims
  to equal anything cannot cross, a patched ``AssertionError`` or ``os._exit`` in the child cannot
  reach the verdict. What the format's harness would not have raised where the test could catch
  it (a value that cannot cross, a child that hangs, dies or whose own code failed as it ran) ends
  the verdict at once, a failure: a test's ``except Exception`` cannot take it for the error it
  expected. The child never holds the test: it is forked before the parent reads
  ``problem.json``, which the parent removes before the child's code runs, and the parent is not
  dumpable from before the fork (no ``/proc/<pid>/mem`` of it can be opened). Neither imports a
  module from the workspace: the script's own folder (``sys.path[0]``, writable by the candidate)
  and any other entry inside the workspace leave ``sys.path`` before the judge's first import;
* the reference solution is ``prompt + canonical_solution``; the judge runs the prompt before the
  test (its helpers), or, where the prompt ends at a signature and does not compile alone, the
  prompt with the canonical solution. Left to the format's harness alone (docs/security.md lists
  them): a function or class instance that must cross (a callback argument, a closure returned),
  aliasing (a result the candidate keeps and changes later), values nested more than 200 deep or
  of more than 16 MB, what the test sets in its own process for the call (recursion limit, seeds,
  patches, the working folder).

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
HARNESS_PATH = f"/app/{HARNESS_DIR}/check.py"  # where a task runs the judge (a seed compiles it for that path)
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

import _thread
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


# Values cross between the candidate and the judge as tagged JSON, built by the judge itself: an object
# that claims to equal anything cannot cross, and the comparison runs in the judge. A value of a
# built-in data type or of a subclass of one crosses as the type the judge rebuilds it as: the
# standard library's own containers as themselves (a Counter, an OrderedDict, a defaultdict of a
# built-in factory, a deque, a namedtuple, a Fraction, a Decimal, a range, a dict's keys, values and
# items), an iterator (a generator, map, zip: HumanEval/33 and /37's tests take `tuple(candidate(...))`)
# as an iterator over what it yielded, any other subclass as its base type's value (an IntEnum as its
# int), as the format's harness compares them. Each is read with its base type's own methods
# (dict.items, list.__iter__, str.__str__, int.__int__, float.__repr__, ...), never the value's, so an
# override of __eq__, __iter__, items, __str__ or __int__ neither runs in the judge nor changes what
# crosses: the stored value does.
_LIMIT = 16 << 20
_MAX_ITEMS = 1 << 20  # what an iterator may yield before it is read as endless
_FACTORIES = {f.__name__: f for f in (int, float, str, bool, list, dict, set, frozenset, tuple, bytes)}


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


def _module_type(module, name):
    found = getattr(sys.modules.get(module), name, None)  # (a type no module loaded cannot be the value's)
    return found if isinstance(found, type) else ()


def _encode(value, depth=0):
    kind = type(value)  # type(), not isinstance(): a __class__ property cannot claim a base
    if depth > 200:
        raise TypeError("a value nested more than 200 deep cannot be judged")
    if value is None or kind is bool:
        return value
    if issubclass(kind, int):
        number = int.__int__(value)  # (json writes no more than ~4,300 digits; hex has no such limit)
        return number if number.bit_length() < 10000 else {"~": "int", "v": int.__format__(number, "x")}
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, float):
        return {"~": "float", "v": float.__repr__(value)}
    if issubclass(kind, list):
        return [_encode(v, depth + 1) for v in list.__iter__(value)]
    if issubclass(kind, dict):
        doc = {"~": "dict", "v": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in _items(value)]}
        if issubclass(kind, collections.OrderedDict):
            doc["~"] = "odict"
        elif issubclass(kind, collections.Counter):
            doc["~"] = "counter"
        elif issubclass(kind, collections.defaultdict):
            factory = collections.defaultdict.__dict__["default_factory"].__get__(value)
            if factory is None or _FACTORIES.get(getattr(factory, "__name__", None)) is factory:
                doc["~"], doc["f"] = "defaultdict", factory and factory.__name__
        return doc
    if issubclass(kind, tuple):
        doc = {"~": "tuple", "v": [_encode(v, depth + 1) for v in tuple.__iter__(value)]}
        fields = getattr(kind, "_fields", None)
        if (isinstance(fields, tuple) and len(fields) == len(doc["v"]) and all(type(f) is str for f in fields)
                and type(kind.__name__) is str):
            doc["~"], doc["n"], doc["f"] = "namedtuple", kind.__name__, list(fields)
        return doc
    for base in (set, frozenset):
        if issubclass(kind, base):
            return {"~": base.__name__, "v": [_encode(v, depth + 1) for v in base.__iter__(value)]}
    if issubclass(kind, (bytes, bytearray)):
        base = bytes if issubclass(kind, bytes) else bytearray
        return {"~": base.__name__, "v": base.hex(value)}
    if issubclass(kind, complex):
        return {"~": "complex", "v": [float.__repr__(complex.real.__get__(value)),
                                      float.__repr__(complex.imag.__get__(value))]}
    if kind is range:
        return {"~": "range", "v": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if issubclass(kind, collections.deque):
        maxlen = collections.deque.maxlen.__get__(value)
        return {"~": "deque", "v": [_encode(v, depth + 1) for v in collections.deque.__iter__(value)], "m": maxlen}
    if issubclass(kind, _module_type("fractions", "Fraction")):
        fraction = sys.modules["fractions"].Fraction.__dict__
        return {"~": "fraction", "v": [_encode(fraction["_numerator"].__get__(value)),
                                       _encode(fraction["_denominator"].__get__(value))]}
    if issubclass(kind, _module_type("decimal", "Decimal")):
        return {"~": "decimal", "v": sys.modules["decimal"].Decimal.__str__(value)}
    for view in ("keys", "values", "items"):
        if issubclass(kind, type(getattr({}, view)())):  # (an OrderedDict's are subclasses)
            return {"~": view, "v": [_encode(v, depth + 1) for v in value]}
    if hasattr(kind, "__next__") and hasattr(kind, "__iter__"):  # an iterator: what it yields, in order
        items, doc = [], {"~": "iterator"}
        iterator = iter(value)
        while True:
            if len(items) >= _MAX_ITEMS:
                raise TypeError("an iterator of more than %d items cannot be judged" % _MAX_ITEMS)
            try:
                item = next(iterator)
            except StopIteration:
                break
            except TimeLimitReached:
                raise
            except Exception as exc:  # (raised as the test reads that far, as a lazy generator would)
                doc["raised"] = _raised(exc, {})
                break
            items.append(_encode(item, depth + 1))
        doc["v"] = items
        return doc
    raise TypeError("a value of type %s cannot be judged (only data of built-in and standard library types "
                    "crosses)" % kind.__name__)


def _decode(doc, classes=None):
    """The value *doc* encodes, built of the judge's own types. *classes*: the namespace whose
    namedtuple class of a name and fields rebuilds one (the task's own, where it defines it)."""
    if isinstance(doc, list):
        return [_decode(v, classes) for v in doc]
    if not isinstance(doc, dict):
        return doc
    kind, v = doc["~"], doc["v"]
    if kind == "float":
        return float(v)
    if kind == "int":
        return int(v, 16)
    if kind in ("tuple", "namedtuple"):
        items = tuple(_decode(x, classes) for x in v)
        return items if kind == "tuple" else _namedtuple(doc["n"], doc["f"], items, classes)
    if kind in ("set", "frozenset", "dict", "odict", "counter", "defaultdict"):
        # members the candidate's subclasses kept apart (a hash of their own) but equal as the values
        # they hold: the collection would shrink here and pass where the format's harness fails it
        if kind in ("set", "frozenset"):
            value = {"set": set, "frozenset": frozenset}[kind](_decode(x, classes) for x in v)
        else:
            pairs = [(_decode(k, classes), _decode(x, classes)) for k, x in v]
            if kind == "defaultdict":
                factory = doc["f"]
                value = collections.defaultdict(None if factory is None else _FACTORIES[factory], pairs)
            else:
                value = {"dict": dict, "odict": collections.OrderedDict, "counter": collections.Counter}[kind]()
                for key, item in pairs:
                    dict.__setitem__(value, key, item) if kind != "odict" else value.__setitem__(key, item)
        if len(value) != len(v):
            raise ValueError("a %s whose members are equal as the values they hold cannot be judged" % kind)
        return value
    if kind in ("bytes", "bytearray"):
        return {"bytes": bytes, "bytearray": bytearray}[kind].fromhex(v)
    if kind == "complex":
        return complex(float(v[0]), float(v[1]))
    if kind == "range":
        return range(*(int(x) for x in v))
    if kind == "deque":
        maxlen = doc["m"]
        return collections.deque((_decode(x, classes) for x in v), None if maxlen is None else int(maxlen))
    if kind == "fraction":
        import fractions
        return fractions.Fraction(_decode(v[0]), _decode(v[1]))
    if kind == "decimal":
        import decimal
        return decimal.Decimal(str(v))
    if kind == "keys":
        keys = dict.fromkeys(_decode(x, classes) for x in v)
        if len(keys) != len(v):
            raise ValueError("a dict's keys equal as the values they hold cannot be judged")
        return keys.keys()
    if kind == "values":
        return dict(enumerate(_decode(x, classes) for x in v)).values()
    if kind == "items":
        items = dict(_decode(x, classes) for x in v)
        if len(items) != len(v):
            raise ValueError("a dict's items equal as the values they hold cannot be judged")
        return items.items()
    if kind == "iterator":
        items = [_decode(x, classes) for x in v]
        return iter(items) if "raised" not in doc else _replay(items, _exception(doc["raised"], classes or {}))
    raise ValueError("unknown tag %r" % (kind,))


def _replay(items, error):
    yield from items
    raise error


def _namedtuple(name, fields, items, classes):
    """A namedtuple of *fields* holding *items*: of the task's class of that name where it has one
    with those fields, else of a class made here (equal as a tuple, its fields readable by name)."""
    fields = tuple(str(f) for f in fields)
    known = (classes or {}).get(name) if isinstance(name, str) else None
    if isinstance(known, type) and issubclass(known, tuple) and getattr(known, "_fields", None) == fields:
        return tuple.__new__(known, items)
    try:
        return collections.namedtuple(name, fields)(*items)
    except (TypeError, ValueError):  # (a name or field namedtuple does not take: the values, as a tuple)
        return items


def _send(fd, doc):
    data = json.dumps(doc).encode("utf-8", "surrogatepass")
    if len(data) > _LIMIT:
        raise ValueError("a value of more than 16 MB cannot be judged")
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
                raise ValueError("a value of more than 16 MB cannot be judged")
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
            namespace = {}
            try:
                exec(solution, namespace)
                function = namespace[job["entry_point"]]
            except BaseException as exc:  # (the format's program would not have run: no call is answered)
                _send(replies, {"unjudged": "the solution failed as it ran: %s: %s" % (
                    type(exc).__name__, str(exc)[:2000])})
                return
            _send(replies, {"ready": True})
            while True:
                try:
                    request = _receive(requests)
                    sent = request["a"]
                    args, kwargs = _decode(sent, namespace), {k: _decode(v, namespace) for k, v in request["k"]}
                except BaseException:
                    return
                try:
                    result = function(*args, **kwargs)
                except TimeLimitReached:
                    raise
                except BaseException as exc:
                    reply = _raised(exc, namespace)
                else:
                    try:
                        reply = {"value": _encode(result)}
                    except TimeLimitReached:
                        raise
                    except BaseException as exc:  # (not an exception of the function's: the verdict ends)
                        reply = {"unjudged": str(exc)[:2000]}
                try:  # the arguments as the call left them: the test sees what the function did to them
                    after = _encode(args)
                    after_k = [[k, _encode(v)] for k, v in kwargs.items()]
                except TimeLimitReached:
                    raise
                except BaseException as exc:
                    reply = {"unjudged": "the function left an argument that %s" % (str(exc)[:2000],)}
                else:
                    if after != sent:
                        reply["args"] = after
                    if after_k != request["k"]:
                        reply["kwargs"] = after_k
                try:
                    _send(replies, reply)
                except ValueError as exc:
                    _send(replies, {"unjudged": str(exc)})


def _raised(exc, namespace):
    """What the child says of an exception the function raised: its class's name, whether that is
    the class the solution's module holds under the name (the prompt's ``InvalidInput``, say, not a
    class of the same name made elsewhere), the nearest built-in exception class it derives from,
    and its arguments, from which the judge makes the exception it raises in its place."""
    kind = type(exc)
    builtin = "BaseException"
    for base in type.__dict__["__mro__"].__get__(kind):
        if getattr(builtins, getattr(base, "__name__", ""), None) is base:
            builtin = base.__name__
            break
    name = str(getattr(kind, "__name__", "?"))
    try:
        message = str(exc)[:2000]
    except BaseException:
        message = ""
    try:
        args = _encode(list(BaseException.args.__get__(exc)))
    except BaseException:
        args = [message]
    return {"raised": name, "own": namespace.get(name) is kind, "builtin": builtin, "message": message, "args": args}


def _prctl(option, value):
    import ctypes
    if ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(%d, %d) failed" % (option, value))


_PR_SET_DUMPABLE = 4


class _CandidateError(Exception):
    pass


def _exception(reply, namespace):
    """The exception the judge raises for one the function raised: the task's own class of that name
    (the prompt's or the test's) where the candidate's was the one its module holds under the name,
    else the built-in class it derives from, made from its arguments (its message, where they
    cannot be)."""
    name, builtin, message = reply["raised"], reply["builtin"], str(reply["message"])
    kind = namespace.get(name) if isinstance(name, str) and reply.get("own") is True else None
    if not (isinstance(kind, type) and issubclass(kind, BaseException)):
        kind = getattr(builtins, builtin, None) if isinstance(builtin, str) else None
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            kind = Exception
    args = _decode(reply.get("args", [message]), namespace)
    args = tuple(args) if isinstance(args, list) else (message,)
    for made in (lambda: kind(*args), lambda: kind(message)):
        try:
            return made()
        except Exception:
            pass
    error = BaseException.__new__(kind)
    error.args = args
    return error


_MUTABLE = (list, dict, set, bytearray, collections.deque, tuple)  # (a tuple: for the lists it holds)


def _same(a, b):
    return type(a) is type(b) and (a is b or a == b or (a != a and b != b))  # (nan: the same value)


def _update(held, now):
    """Change the test's argument *held* in place into *now*, what the function left of it."""
    if isinstance(held, (list, tuple)) and type(now) is type(held) and (isinstance(held, list) or len(held) == len(now)):
        for i, item in enumerate(now[:len(held)]):  # (item by item: what the test holds of them stays theirs)
            _update_member(held, i, item)
        if isinstance(held, list):
            held[len(now):] = now[len(held):]
    elif isinstance(held, dict) and isinstance(now, dict):
        if list(held) == list(now):
            for key, item in now.items():
                _update_member(held, key, item)
        else:
            held.clear()
            held.update(now)
    elif isinstance(held, (set, bytearray, collections.deque)) and type(now) is type(held):
        if held != now:
            held.clear()
            held.update(now) if isinstance(held, set) else held.extend(now)


def _update_member(held, key, item):
    """One member of *held*: changed in place where it is a container of *item*'s type, else
    replaced where its value changed (a tuple's members in place only)."""
    if type(held[key]) is type(item) and isinstance(item, _MUTABLE):
        _update(held[key], item)
    elif not _same(held[key], item) and not isinstance(held, tuple):
        held[key] = item


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
    real_stdout = os.dup(1)  # (the test's output goes to a stream of its own)
    timeout = float(problem["timeout_s"])
    entry = problem["entry_point"]
    _send(to_child, {"entry_point": entry, "timeout": timeout})
    deadline = time.monotonic() + timeout + 1

    def unjudged(why):
        """The end of the verdict, where nothing the test does may catch it: a process that ended,
        a value that cannot cross, the time limit (a broad ``except Exception`` in a test took each of
        them, as it was raised there, for the error the test expected: a wrong answer passed)."""
        os.write(real_stdout, ("%s: %s\n" % (problem["task_id"], why)).encode("utf-8", "replace"))
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        os._exit(1)

    ready = []

    def read():
        try:
            return _receive(replies, deadline)
        except TimeLimitReached:
            unjudged("timed out")
        except Exception as exc:
            unjudged("failed: %s" % (exc,))

    def await_ready():
        """The child's word that the solution ran (before: an exception of its module's code was
        raised at each call, where a test's ``except Exception`` took it for the error it expected)."""
        if not ready:
            reply = read()
            if not (isinstance(reply, dict) and reply.get("ready") is True):
                unjudged("failed: %s" % (reply.get("unjudged") if isinstance(reply, dict) else reply,))
            ready.append(True)

    def receive():
        reply = read()
        if not isinstance(reply, dict):
            unjudged("failed: the candidate's reply cannot be read: %r" % (reply,))
        return reply

    lock = _thread.allocate_lock()

    def candidate(*args, **kwargs):
        # The lock is held for the exchange alone: what the test's own code does as the arguments are
        # read and the reply is made into values (an argument's __iter__ or __eq__, an exception
        # class's constructor) may call the candidate again.
        try:
            request = {"a": _encode(list(args)), "k": [[k, _encode(v)] for k, v in kwargs.items()]}
        except Exception as exc:
            unjudged("failed: an argument of the test's cannot cross to the candidate: %s" % (exc,))
        with lock:  # (a test's threads call it at once: one request and its reply at a time)
            reply = call(request)
        return answer(args, kwargs, reply)

    def call(request):
        # (first the child's word: sent to a child whose solution failed, the request would meet a
        # closed pipe, and the verdict would name that instead, by the order the two processes ran)
        await_ready()
        try:
            _send(to_child, request)
        except Exception as exc:
            unjudged("failed: %s" % (exc,))
        return receive()

    def answer(args, kwargs, reply):
        try:
            if "unjudged" in reply:
                unjudged("failed: %s" % (reply["unjudged"],))
            if "args" in reply:
                for held, now in zip(args, _decode(reply["args"], namespace)):
                    _update(held, now)
            if "kwargs" in reply:
                for key, now in reply["kwargs"]:
                    if key in kwargs:
                        _update(kwargs[key], _decode(now, namespace))
            if "raised" in reply:
                error = _exception(reply, namespace)
            else:
                return _decode(reply["value"], namespace)
        except Exception as exc:  # (a reply the judge did not write: the child's code made it)
            unjudged("failed: the candidate's reply cannot be read: %s" % (exc,))
        raise error

    candidate.__name__ = entry
    # (its source is the candidate's, which is not here: inspect.getsource fails, as on the harness's exec'd
    # function, instead of showing a test that looks for loops this judge's two lines)
    candidate.__code__ = candidate.__code__.replace(co_filename="<candidate>")
    stream = _WriteOnly()
    namespace = {}
    try:
        # the judge runs the task's own text only: the prompt (for helpers the test uses) and the test.
        # A test that calls the function by name (HumanEval/33) calls the candidate, as in the format's
        # harness, where the completion's definition replaces the prompt's stub.
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            exec(problem.get("prompt", ""), namespace)
            namespace[entry] = candidate
            exec(problem["test"], namespace)
            namespace["check"](candidate)
        await_ready()  # (a test that never called the candidate: the solution must still have run)
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


def _prelude(doc: dict[str, Any]) -> str:
    """What the judge runs before the test, for the helpers a test uses (HumanEval/38's
    ``decode_cyclic`` calls the prompt's ``encode_cyclic``): the prompt, where it compiles alone; a
    prompt that ends at a signature (no docstring) does not, and then the task's own canonical
    solution completes it (before, every solution of such a task scored 0, the reference too)."""
    try:
        ast.parse(doc["prompt"])
        return doc["prompt"]
    except SyntaxError:
        return doc["prompt"] + doc["canonical_solution"]


def humaneval_task(doc: dict[str, Any], task_id: str, *, timeout_s: float, runtime: str,
                   source: str, line: int) -> dict[str, Any]:
    """The task document for one HumanEval record."""
    entry = doc["entry_point"]
    problem = {"task_id": doc["task_id"], "entry_point": entry, "prompt": _prelude(doc), "test": doc["test"],
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
            {"action": "run_command", "command": f"python {HARNESS_PATH} /app/{SOLUTION}",
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
