"""How much does a timing rule move when nothing changes?

Plays the same correct solution N times (single-shot, one process, one after the other) and
scores each run's measured ``execution_time_ms`` three ways, side by side:

* linear, as the README's reference document does: ``max(0, 1 - t / T)`` (T = 5000 ms);
* a step: 1 when ``t <= T_step`` (the task's own threshold), else 0;
* buckets: two step rules of half the weight each (fast: ``t <= T_fast``, acceptable:
  ``t <= T_step``), a staircase of 0, 0.5 and 1 that any task can write today.

It prints each run's time and scores, then the spread (max - min) of each scoring. A linear time
rule hands a trainer noise of the order of the spread; a step or bucket rule whose thresholds lie
well away from the solution's times hands it none (and one near a threshold flips). Usage::

    .venv/bin/python bench/bench_timing_noise.py [--task examples.fast_primes] [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics

import gymnasium as gym

import agentenv

LINEAR_T = 5000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="examples.fast_primes", help="a single-shot task with a reference solution")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    env_id = args.task if args.task.startswith("agentenv/") else f"agentenv/{args.task}-v0"
    env = gym.make(env_id)
    task = env.unwrapped.task
    step_t = next((r.threshold for r in task.reward.rules if r.metric == "execution_time_ms" and r.threshold), 2000.0)
    fast_t = step_t / 4
    code = task.reference_code()
    rows = []
    try:
        env.reset(seed=0)
        env.step(code)  # warm-up: the runtime and the pool, not measured
        for _ in range(args.runs):
            env.reset(seed=0)
            _, _, _, _, info = env.step(code)
            t = float(info["measurements"]["execution_time_ms"])
            rows.append((t, max(0.0, 1.0 - t / LINEAR_T), float(t <= step_t), (float(t <= fast_t) + float(t <= step_t)) / 2,
                         info["metrics"].get("test_pass_rate")))
    finally:
        env.close()
    print(f"{task.task_id}: the reference solution, {args.runs} runs; linear T={LINEAR_T:.0f} ms, "
          f"step T={step_t:.0f} ms, buckets {fast_t:.0f}/{step_t:.0f} ms")
    print(f"{'run':>4} {'time ms':>9} {'linear':>7} {'step':>5} {'buckets':>8} {'pass rate':>10}")
    for i, (t, lin, step, buckets, rate) in enumerate(rows, 1):
        print(f"{i:>4} {t:>9.0f} {lin:>7.3f} {step:>5.1f} {buckets:>8.2f} {rate!s:>10}")
    times = [r[0] for r in rows]
    print(f"time: median {statistics.median(times):.0f} ms, min {min(times):.0f}, max {max(times):.0f} "
          f"(max/min {max(times) / min(times):.2f}x)")
    for name, col in (("linear", 1), ("step", 2), ("buckets", 3)):
        values = [r[col] for r in rows]
        print(f"{name:>8} score: spread {max(values) - min(values):.3f}, stdev {statistics.pstdev(values):.3f}")
    print(f"  (agentenv {agentenv.__version__}; the composite moves by the rule's weight times these)")


if __name__ == "__main__":
    main()
