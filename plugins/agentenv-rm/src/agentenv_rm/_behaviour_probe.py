"""Runs inside an agentenv sandbox (standard library only): call each function's original and
degraded versions on the same arguments and print what each did, one JSON line per function.

Input (``cases.json``): ``[{"id", "module", "name", "variants": {kind: source}}]``. Each version is
compiled into a copy of its module's namespace and run in a forked child (so what one version does
to module state cannot reach another); the original runs twice, to tell a nondeterministic function
from a changed one. An outcome is the normalised repr of the result (iterators drained up to 50
items), the arguments after the call (mutation), what was printed, or the exception's type.
"""

import contextlib
import copy
import importlib
import inspect
import io
import itertools
import json
import os
import random
import re
import select
import signal
import sys
import warnings

POOL = [0, 1, -3, 2.5, "abc", "", "a b,c", [3, 1, 2], [], {"k": 1}, None, True, (1, "x"), b"xy", 10 ** 20, {2, 3}]
CALLS = 24
CALL_TIMEOUT_S = 0.3
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")
# line numbers (in tracebacks, pdb and warnings output) are formatting, which a degradation may change
LINE = re.compile(r"((?:<[^>\n]*>|\.py)\()\d+(\))|(\bline )\d+")


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _normal(value):
    text = value if isinstance(value, str) else repr(value)
    text = LINE.sub(lambda m: (m.group(1) + "?" + m.group(2)) if m.group(1) else m.group(3) + "?", text)
    return ADDRESS.sub(" at 0x?", text)[:400]


def _arguments(fn, rng):
    sig = inspect.signature(fn)
    positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if any(p.kind == p.KEYWORD_ONLY and p.default is p.empty for p in sig.parameters.values()):
        return None
    if len(required) > 4:
        return None
    calls = []
    for _ in range(CALLS):
        n = rng.randint(len(required), min(len(positional), len(required) + 1))
        calls.append([rng.choice(POOL) for _ in range(n)])
    return calls


def _run(fn, calls):
    outcomes = []
    for args in calls:
        args = copy.deepcopy(args)
        out = io.StringIO()
        random.seed(0)
        signal.setitimer(signal.ITIMER_REAL, CALL_TIMEOUT_S)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fn(*args)
                if inspect.isgenerator(result) or isinstance(result, (map, filter, zip, itertools.chain)):
                    result = list(itertools.islice(result, 50))
            outcome = ["ok", _normal(result), _normal(args), _normal(out.getvalue()[:400])]
        except _Timeout:
            outcome = ["timeout"]
        except BaseException as exc:  # any exception is an outcome to compare
            outcome = ["raise", type(exc).__name__]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        outcomes.append(outcome)
    return outcomes


def _in_child(namespace, name, source, calls):
    """The outcomes of one version, computed in a forked child; None when it died or hung."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            sys.setrecursionlimit(2000)
            ns = dict(namespace)
            exec(compile(source, f"<{name}>", "exec"), ns)
            data = json.dumps(_run(ns[name], calls)).encode()
        except BaseException as exc:
            data = json.dumps([["broken", type(exc).__name__]]).encode()
        with os.fdopen(write, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(write)
    chunks, deadline = [], CALLS * CALL_TIMEOUT_S + 5
    with os.fdopen(read, "rb") as f:
        while True:
            ready, _, _ = select.select([f], [], [], deadline)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(f.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return None


def main(path):
    signal.signal(signal.SIGALRM, _alarm)
    with open(path) as f:
        cases = json.load(f)
    for case in cases:
        report = {"id": case["id"], "name": case["name"]}
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(case["module"])
            namespace = vars(module)
            ns = dict(namespace)
            exec(compile(case["variants"]["original"], "<original>", "exec"), ns)
            calls = _arguments(ns[case["name"]], random.Random(case["id"]))
        except BaseException as exc:
            report["skipped"] = f"{type(exc).__name__}: {str(exc)[:100]}"
            print(json.dumps(report), flush=True)
            continue
        if calls is None:
            report["skipped"] = "signature"
            print(json.dumps(report), flush=True)
            continue
        results = {kind: _in_child(namespace, case["name"], src, calls) for kind, src in case["variants"].items()}
        again = _in_child(namespace, case["name"], case["variants"]["original"], calls)
        report["calls"] = len(calls)
        report["returned"] = sum(1 for o in results["original"] or [] if o[0] == "ok")
        report["deterministic"] = again == results["original"] and again is not None
        report["differs"] = sorted(k for k, r in results.items() if k != "original" and r != results["original"])
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
