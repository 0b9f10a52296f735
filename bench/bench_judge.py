"""What the trusted pytest judge adds to a scored run, by the number of tests.

For test modules of 1, 100 and 1,000 tests (``assert add(i, 3) == i + 3`` each, all passing), runs
``pytest.main`` in children forked from one interpreter of the bench task's runtime that imported
what a warm template imports (``_nswarm.preload_pytest``, the judge executed and its modules held),
on the host, alternating two kinds of run:

* **judged**: the scored command as the namespace backend runs it (``-p`` the judge's entry module,
  the task's configuration, the judge's settings and key written beside it before each run);
* **plain**: the same pytest run without the judge.

Prints the CPU of each (p50 over the runs, ``ru_utime + ru_stime`` of the child) and the judge's
cost: judged / plain, and (judged - plain) per test. To compare two versions of the judge, run this
file from each checkout in turn (``PYTHONPATH=<other checkout>``): the ratios are measured each
against its own plain runs. Usage::

    .venv/bin/python bench/bench_judge.py [--runs 12] [--tests 1,100,1000]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

import agentenv
from agentenv._extension import ScoringContext
from agentenv._spec import EnvironmentConfig
from agentenv.builtin import reports

DEPENDENCIES = ("pytest==8.3.5", "pytest-json-report==1.5.0")
COMMAND = "python -m pytest -q -p no:cacheprovider tests"

# Runs in the runtime's interpreter: argv[1] is a JSON file of {"builtin", "root", "runs", "source",
# "kinds": {kind: {"files", "argv", "pythonpath"}}}; prints {kind: [cpu ms, ...]}.
CHILD = r"""
import base64, hashlib, json, os, sys
spec = json.load(open(sys.argv[1]))
sys.path.insert(0, spec["builtin"])
import _nswarm
del sys.path[0]
kinds = spec["kinds"]
source = base64.b64decode(spec["source"])
_nswarm._JUDGE = _nswarm.judge_code(source, hashlib.sha256(source).hexdigest(), "agentenv_judge")
_nswarm.preload_pytest(tuple(n for n in _nswarm.PYTEST_EXTRA if n != "readline"))
import gc
gc.collect()
gc.freeze()
import pytest
os.chdir(spec["root"])
cpu = {kind: [] for kind in kinds}
for i in range(spec["runs"]):
    for kind, run in kinds.items():
        for path, data in run["files"].items():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(base64.b64decode(data))
        pid = os.fork()
        if pid == 0:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            sys.path[:0] = run["pythonpath"]
            os._exit(pytest.main(run["argv"]))
        _, status, usage = os.wait4(pid, 0)
        if i == 0 and os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"the {kind} run failed: exit status {os.waitstatus_to_exitcode(status)}")
        cpu[kind].append((usage.ru_utime + usage.ru_stime) * 1000)
print(json.dumps(cpu))
"""


def test_module(n: int) -> str:
    return "from calc import add\n" + "".join(f"\n\ndef test_add_{i}():\n    assert add({i}, 3) == {i + 3}\n"
                                              for i in range(n))


def judged(root: str, runtime, tests: str) -> dict:
    """The judged run of COMMAND, as the pytest report format instruments it."""
    fmt = agentenv.registry().report_format_for(COMMAND)
    ctx = ScoringContext(os.urandom(8).hex(), root, {"tests/test_calc.py": tests.encode()},
                         [f"{root}/tests/test_calc.py"], False, runtime, {})
    scored = fmt.instrument(COMMAND, ctx)
    work = scored.env["PYTHONPATH"].split(":")[0]
    return {"argv": shlex.split(scored.command)[3:],
            "files": {p: base64.b64encode(d).decode() for p, d in scored.files.items()},
            "pythonpath": [work, root]}  # (the judge's entry module, and the folder it prepends for -m pytest)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--tests", default="1,100,1000")
    args = parser.parse_args()
    runtime = agentenv.registry().runtime_for("python3.11").prepare(EnvironmentConfig("python3.11", DEPENDENCIES))
    builtin = os.path.dirname(os.path.abspath(reports.__file__))
    print(f"the trusted judge's cost over a plain pytest run: CPU of pytest.main in a fork of a warm "
          f"interpreter, p50 of {args.runs} alternated runs each ({os.cpu_count()} CPUs)")
    results = {}
    for n in (int(x) for x in args.tests.split(",")):
        with tempfile.TemporaryDirectory(prefix="agentenv-bench-") as root:
            tests = test_module(n)
            os.makedirs(os.path.join(root, "tests"))
            with open(os.path.join(root, "calc.py"), "w") as f:
                f.write("def add(a, b):\n    return a + b\n")
            with open(os.path.join(root, "tests", "test_calc.py"), "w") as f:
                f.write(tests)
            kinds = {"judged": judged(root, runtime, tests)}
            ini = kinds["judged"]["argv"][kinds["judged"]["argv"].index("-c") + 1]
            kinds["plain"] = {"argv": ["-c", ini, f"--rootdir={root}", "-q", "-p", "no:cacheprovider",
                                                     "tests"], "files": {}, "pythonpath": [root]}
            kinds["plain"]["files"] = {ini: kinds["judged"]["files"][ini]}  # (the judge removes it: written each run)
            spec = os.path.join(root, "spec.json")
            with open(spec, "w") as f:
                json.dump({"builtin": builtin, "root": root, "runs": args.runs, "kinds": kinds,
                           "source": base64.b64encode(reports.judge_source()).decode()}, f)
            done = subprocess.run(["python", "-c", CHILD, spec], env={**os.environ, **runtime.env}, cwd=root,
                                  capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                raise SystemExit(f"bench: the runs failed: {done.stderr[-1500:]}")
            cpu = {kind: statistics.median(v) for kind, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}
        results[n] = cpu
        plain = cpu["plain"]
        for kind, value in cpu.items():
            extra = "" if kind == "plain" else (f"   {value / plain:5.2f}x plain; the judge {(value - plain) / n:7.2f} "
                                                "ms a test")
            print(f"  {n:5d} test{'s' if n > 1 else ' '}  {kind:7} CPU p50 {value:9.1f} ms{extra}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
