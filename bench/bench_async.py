"""The async batch API against ``agentenv eval --workers 2``, side by side, and 1,000 episodes in flight.

1. Throughput: the single-shot tasks of a suite, played with their reference solutions, N samples
   each, once through ``agentenv eval --workers W`` (the CLI, in this process) and once through
   ``RolloutPool.score`` (the same completions, the same tasks), alternating, after a warm-up run of
   each. Prints episodes per second of both and the ratio (target: >= 1.0x).
2. In flight: 1,000 single-shot episodes of a small task submitted to one ``RolloutPool.score`` call
   at once. This process's open file descriptors and resident memory are sampled every 20 ms
   (``/proc/self``); prints the baseline, the peak and what is left after, and the peak number of
   episodes that held a sandbox (the concurrency limit bounds it, whatever is submitted).

Usage::

    .venv/bin/python bench/bench_async.py [--suite examples] [--samples 4] [--workers 2]
        [--concurrency 2] [--rounds 2] [--inflight 1000] [--inflight-concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import threading
import time

import agentenv
from agentenv._cli import main as cli

# A task whose evaluation costs one short Python process (no pytest): the in-flight run is about
# bookkeeping under load, not about pytest's start-up.
SMALL_TASK = {
    "task_id": "bench.echo",
    "description": "Print the number 42.",
    "environment_config": {"runtime": "python3", "dependencies": []},
    "workspace": {"files": {"answer.py": "print(0)\n"}},
    "execution_steps": [{"action": "overwrite_file", "path": "/app/answer.py", "content": "<model_generated_code>"},
                        {"action": "run_command", "command": "python answer.py | grep -qx 42"}],
    "reward_logic": {"type": "composite", "rules": [{"metric": "command_succeeded", "weight": 1.0}]},
    "limits": {"wall_time_s": 10, "memory_mb": 256},
}


def process_usage() -> tuple[int, float]:
    """(open file descriptors, resident MiB) of this process."""
    fds = len(os.listdir("/proc/self/fd"))
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return fds, rss / 1024


class Sampler:
    def __init__(self, period: float = 0.02):
        self.period, self.peak_fds, self.peak_rss = period, 0, 0.0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            fds, rss = process_usage()
            self.peak_fds, self.peak_rss = max(self.peak_fds, fds), max(self.peak_rss, rss)
            time.sleep(self.period)

    def __enter__(self) -> "Sampler":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def single_shot_tasks(suite_name: str) -> list[agentenv.TaskSpec]:
    tasks = [t for t in agentenv.find_suite(suite_name).load() if t.supports_single_shot and t.reference_code()]
    if not tasks:
        sys.exit(f"suite {suite_name} has no single-shot task with a reference solution")
    return tasks


def run_eval(suite: str, tasks: list[agentenv.TaskSpec], samples: int, workers: int, out: str) -> float:
    start = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli(["eval", "--suite", suite, "--agent", "reference", "--samples", str(samples), "--workers", str(workers),
                    "--tasks", ",".join(t.task_id for t in tasks), "--out", out, "-q"])
    if code != 0:
        sys.exit(f"agentenv eval exited {code}")
    return time.monotonic() - start


def run_pool(tasks: list[agentenv.TaskSpec], samples: int, concurrency: int | None) -> tuple[float, list]:
    refs = [t for t in tasks for _ in range(samples)]
    completions = [t.reference_code() for t in refs]

    async def go():
        async with agentenv.RolloutPool(concurrency=concurrency, retries=0) as pool:
            start = time.monotonic()
            results = await pool.score(refs, completions)
            return time.monotonic() - start, results
    return asyncio.run(go())


def throughput(args) -> dict:
    tasks = single_shot_tasks(args.suite)
    n = len(tasks) * args.samples
    with tempfile.TemporaryDirectory() as tmp:
        run_eval(args.suite, tasks, 1, args.workers, os.path.join(tmp, "warm"))
        run_pool(tasks, 1, args.concurrency)
        evals, pools = [], []
        for i in range(args.rounds):
            evals.append(n / run_eval(args.suite, tasks, args.samples, args.workers, os.path.join(tmp, f"e{i}")))
            wall, results = run_pool(tasks, args.samples, args.concurrency)
            if any(r.reward != 1.0 for r in results):
                sys.exit(f"a reference solution scored below 1: {[(r.task_id, r.reward) for r in results if r.reward != 1]}")
            pools.append(n / wall)
            print(f"  round {i + 1}: eval --workers {args.workers} {evals[-1]:.2f} ep/s | "
                  f"RolloutPool(concurrency={args.concurrency}) {pools[-1]:.2f} ep/s", flush=True)
    e, p = statistics.median(evals), statistics.median(pools)
    return {"episodes_per_round": n, "eval_eps": e, "pool_eps": p, "ratio": p / e}


def inflight(args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "task.json")
        with open(path, "w") as f:
            json.dump(SMALL_TASK, f)
        task = agentenv.load_task(path)
        completions = ["print(42)\n" if i % 2 == 0 else "print(7)\n" for i in range(args.inflight)]
        run_pool_small = agentenv.RolloutPool(concurrency=args.inflight_concurrency, retries=0)
        run_pool_small.score_sync(task, completions[:4])  # warm: runtime and env built
        base_fds, base_rss = process_usage()
        with Sampler() as sampler:
            start = time.monotonic()
            results = run_pool_small.score_sync(task, completions)
            wall = time.monotonic() - start
        peak = run_pool_small.peak_concurrency
        run_pool_small.close()
        after_fds, after_rss = process_usage()
    wrong = sum(r.reward != (1.0 if i % 2 == 0 else 0.0) for i, r in enumerate(results))
    return {"episodes": len(results), "wrong_rewards": wrong, "masked": sum(r.reward_masked for r in results),
            "wall_s": wall, "eps": len(results) / wall, "peak_in_sandbox": peak,
            "fds": (base_fds, sampler.peak_fds, after_fds), "rss_mib": (base_rss, sampler.peak_rss, after_rss)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="examples")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=None,
                        help="the pool's limit (default: the pool's own default, two per core)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--inflight", type=int, default=1000)
    parser.add_argument("--inflight-concurrency", type=int, default=32)
    args = parser.parse_args()
    if args.concurrency is None:
        default_pool = agentenv.RolloutPool()
        args.concurrency = default_pool.concurrency
        default_pool.close()
    print(f"[bench_async] throughput, {args.suite} single-shot references x {args.samples} samples:", flush=True)
    t = throughput(args)
    print(f"[bench_async] {t['episodes_per_round']} episodes a round; eval --workers {args.workers}: "
          f"{t['eval_eps']:.2f} ep/s, RolloutPool.score(concurrency={args.concurrency}): {t['pool_eps']:.2f} ep/s, "
          f"ratio {t['ratio']:.2f}x (target >= 1.0x)")
    print(f"[bench_async] {args.inflight} episodes in flight, concurrency {args.inflight_concurrency}:", flush=True)
    f = inflight(args)
    print(f"[bench_async] {f['episodes']} episodes in {f['wall_s']:.1f} s ({f['eps']:.1f} ep/s), {f['wrong_rewards']} wrong "
          f"rewards, {f['masked']} masked; at most {f['peak_in_sandbox']} held a sandbox at once")
    print(f"[bench_async] this process: fds {f['fds'][0]} -> peak {f['fds'][1]} -> {f['fds'][2]} after; "
          f"RSS {f['rss_mib'][0]:.0f} -> peak {f['rss_mib'][1]:.0f} -> {f['rss_mib'][2]:.0f} MiB after")
    ok = t["ratio"] >= 1.0 and f["wrong_rewards"] == 0 and f["masked"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
