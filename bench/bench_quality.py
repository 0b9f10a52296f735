"""Cost of the code-quality metrics (agentenv-quality) per file, measured side by side in one run.

    .venv/bin/python bench/bench_quality.py [--iterations N] [--json FILE]

Rows: ruff on one 100-line Python file, on 10 such files in one run (per file), radon's complexity
and maintainability index on one file, shellcheck on one 40-line script, the whole metric provider
on one file with a cold cache and with a warm one (the same solution evaluated again), and for
scale the single-shot fizzbuzz episode that every metric rides on. Ratios are against the episode.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import statistics
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def python_file(seed: int) -> bytes:
    """100 lines of real code (two whole standard-library functions), different for every seed."""
    import difflib
    import textwrap as textwrap_module

    parts = [textwrap.dedent(inspect.getsource(f)) for f in (textwrap_module.dedent, difflib.get_close_matches)]
    return (f"# variant {seed}\n" + "\n\n".join(parts)).encode()


SHELL = b"""#!/bin/sh
# print the size of each file below $1, largest first
dir=$1
total=0
for f in $(find $dir -type f); do
    size=$(wc -c < $f)
    echo "$size\t$f"
    total=$((total + size))
done | sort -rn
echo TOTAL $total
""" * 4


def timed(fn, n: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of *n* calls (CPU time of this process, all its threads: on a
    shared machine the wall clock also counts the others' load)."""
    fn()
    wall, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def table(rows, base: float, ratio: str) -> list[dict]:
    """Print (name, (wall ms, cpu ms), files per call) rows per file, with the wall p50 as a ratio
    to *base*; return them as records."""
    print(f"{'measure (ms per file)':<54} {'wall p50':>9} {'p95':>7} {'cpu p50':>8} {ratio:>10}")
    report = []
    for name, (wall, cpu), files in rows:
        per = sorted(t / files for t in wall)
        p50, p95 = statistics.median(per), per[int(0.95 * (len(per) - 1))]
        cpu50 = statistics.median(cpu) / files
        print(f"{name:<54} {p50:>9.2f} {p95:>7.2f} {cpu50:>8.2f} {p50 / base:>10.3f}")
        report.append({"name": name, "p50_ms_per_file": round(p50, 3), "p95_ms_per_file": round(p95, 3),
                       "cpu_p50_ms_per_file": round(cpu50, 3), "ratio": round(p50 / base, 4)})
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import gymnasium as gym

    import agentenv
    from agentenv_quality import QualityMetrics, complexity, lint_python, maintainability, run_shellcheck

    n = args.iterations
    one = python_file(0)
    ten = {f"f{i}.py": python_file(i) for i in range(10)}
    counter = iter(range(10 ** 9))
    provider = QualityMetrics()

    def cold():
        files = {"solution.py": python_file(next(counter) + 100)}
        return provider.measure(agentenv.RunContext("", agentenv.ExecResult("", 0, "", ""), files=files))

    warm_files = {"solution.py": one}

    def warm():
        return provider.measure(agentenv.RunContext("", agentenv.ExecResult("", 0, "", ""), files=warm_files))

    rows = [
        ("ruff, 1 file", timed(lambda: lint_python({"a.py": one}), n), 1),
        ("ruff, 10 files in one run (per file)", timed(lambda: lint_python(ten), n), 10),
        ("radon complexity + maintainability, 1 file", timed(lambda: (complexity(one.decode()),
                                                                      maintainability(one.decode())), n), 1),
    ]
    if shutil.which("shellcheck"):
        rows.append(("shellcheck, 1 script", timed(lambda: run_shellcheck({"a.sh": SHELL}), n), 1))
    rows += [("the metric provider, 1 new file (cold)", timed(cold, n), 1),
             ("the metric provider, the same file again (cached)", timed(warm, n), 1)]
    env = gym.make("agentenv/examples.fizzbuzz-v0")
    with open(os.path.join(HERE, "..", "tasks", "examples", "fizzbuzz", "solution", "fizzbuzz.py")) as f:
        solution = f.read()

    def episode():
        env.reset()
        env.step(solution)
    episodes = timed(episode, max(5, n // 2))
    env.close()
    base = statistics.median(episodes[0])
    report = table(rows + [("fizzbuzz single-shot episode (for scale)", episodes, 1)], base, "x episode")
    print("(cpu: this process only; ruff and shellcheck run as child processes, so their CPU is not in it)")
    print(f"({len(one.splitlines())}-line Python file, {len(SHELL.splitlines())}-line script, {n} iterations, "
          f"python {sys.version.split()[0]})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
