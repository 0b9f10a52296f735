"""Does ``agentenv eval --workers 2`` keep two cores busy?

Runs the same suite with the reference agent twice, side by side in one process: once with one
worker (which also gives every episode's own wall time), once with W workers. Prints

    speedup = (sum of the single-worker episode times) / (wall time with W workers)

which is W on a machine with W idle cores and 1.0 when the workers serialize. Usage::

    .venv/bin/python bench/bench_eval.py [--suite examples] [--workers 2] [--samples 1] [--tasks GLOB,...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from agentenv import read_jsonl
from agentenv.builtin.eval.run import EvalConfig, run_eval
from agentenv import find_suite


def timed(config: EvalConfig) -> tuple[float, list[dict]]:
    start = time.monotonic()
    run_eval(config)
    wall = time.monotonic() - start
    episodes = [r for r in read_jsonl(os.path.join(config.out, "trajectories.jsonl")) if r["type"] == "episode"]
    return wall, episodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="examples")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--tasks", default="")
    args = parser.parse_args()
    suite = find_suite(args.suite)
    patterns = tuple(p for p in args.tasks.split(",") if p)
    with tempfile.TemporaryDirectory() as tmp:
        def config(name, workers):
            return EvalConfig(suite, "reference", os.path.join(tmp, name), samples=args.samples, workers=workers,
                              tasks=patterns, progress=False)

        timed(config("warmup", args.workers))  # runtimes built, zygote warm: measure the steady state
        wall_1, single = timed(config("one", 1))
        wall_w, multi = timed(config("many", args.workers))
    total = sum(e["wall_time_s"] for e in single)
    n = len(single)
    print(f"suite {suite.name} {suite.version}, agent reference, {n} episodes, {os.cpu_count()} CPUs")
    print(f"  1 worker : {wall_1:7.2f} s wall, {n / wall_1:6.2f} episodes/s, sum of episode times {total:.2f} s")
    print(f"  {args.workers} workers: {wall_w:7.2f} s wall, {len(multi) / wall_w:6.2f} episodes/s")
    print(f"  speedup (sum of single-episode times / {args.workers}-worker wall): {total / wall_w:.2f}x "
          f"(ideal {min(args.workers, os.cpu_count() or 1)}.00x)")
    print(f"  episodes/s ratio ({args.workers} workers / 1 worker): {(len(multi) / wall_w) / (n / wall_1):.2f}x")
    failed = [e for e in single + multi if not e["success"]]
    if failed:
        print(f"  warning: {len(failed)} reference episode(s) did not succeed: {failed[0]['cause']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
