"""Scheduler benchmarks, measured side by side in one run: FIFO versus lanes on a long-tailed
workload, and a burst of episodes on real sandboxes.

1. Mixed workload (SYNTHETIC episodes: each one sleeps for its duration; no sandbox, so the figures
   are the scheduler's alone). 90% short episodes, 10% long ones, all submitted at once to the
   same number of workers, run three times: the short episodes alone, the mix under FIFO, the mix
   under lanes. Durations vary +-20% around their means; 25 short and 5 long tasks, whose
   predictions start from their documents' ``expected_duration_s``. A fourth run repeats the
   lanes with one long task whose document claims it is short: the predictor learns otherwise
   after its first episode and moves the rest of that task's episodes. Printed: the
   short episodes' p50/p99 latency (submission to result), makespan against its lower bound (total
   work / workers) and worker utilisation, each lanes-vs-FIFO and against the targets of issue 13
   (short p99 under the mix within 1.5x of the short episodes alone, makespan within 1.1x of the
   lower bound, utilisation >= 90%). A PNG shows the lanes' slots, running episodes and queue
   depths over time.
2. Burst (REAL sandboxes of the namespace backend: open, run ``true``, close): 2,000 episodes
   submitted at once. Printed: failures, sandboxes left open, the most sandboxes being created at
   once (measured by the episodes themselves) against the admission cap.

Quick mode (default) scales the durations by 1/20 (short 15 ms, long 1 s, 1,000 episodes, about
a minute in all). Full mode is the issue's workload: short 0.3 s, long 20 s, 2,000 episodes,
8 workers (about 25 minutes)::

    .venv/bin/python bench/bench_scheduler.py                 # quick
    .venv/bin/python bench/bench_scheduler.py --full
    .venv/bin/python bench/bench_scheduler.py --png docs/img/scheduler_lanes.png
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import threading
import time

import agentenv
from agentenv import Deadlines, EpisodeJob, Lane, Scheduler, SchedulerConfig, ThreadExecutor


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def mixed_jobs(episodes: int, short_s: float, long_s: float, seed: int = 0, mislabelled: bool = False) -> list[EpisodeJob]:
    """90% short, 10% long, shuffled (the FIFO order), +-20% jitter on each duration; with
    *mislabelled*, the document of one long task (long-0) claims it is short."""
    rng = random.Random(seed)
    jobs = []
    for i in range(episodes):
        long = i % 10 == 0
        if long:
            task = f"long-{rng.randrange(5)}"
            expected = short_s if mislabelled and task == "long-0" else long_s
            duration = long_s * rng.uniform(0.8, 1.2)
        else:
            task = f"short-{rng.randrange(25)}"
            expected = short_s
            duration = short_s * rng.uniform(0.8, 1.2)
        jobs.append(EpisodeJob((task, i), task, payload=duration, expected_duration_s=expected))
    rng.shuffle(jobs)
    return jobs


def sleep_work(duration: float, ctx: agentenv.AttemptContext) -> float:
    """A synthetic episode: its sandbox is 'up' at once, then it 'acts' for *duration* seconds."""
    ctx.enter("agent")
    time.sleep(duration)
    return duration


def run(jobs: list[EpisodeJob], workers: int, config: SchedulerConfig) -> agentenv.RunReport:
    with ThreadExecutor(sleep_work, workers=workers, name="bench") as executor:
        return Scheduler(executor, config).run(jobs)


def mixed(args: argparse.Namespace) -> dict:
    scale = 1.0 if args.full else 1 / 20
    short_s, long_s = 0.3 * scale, 20.0 * scale
    episodes = 2000 if args.full else 1000
    workers = args.workers
    jobs = mixed_jobs(episodes, short_s, long_s)
    shorts = [j for j in jobs if j.task_id.startswith("short")]
    deadlines = Deadlines(start_s=60, agent_s=long_s * 10, scoring_s=60)
    lanes = (Lane("short", short_s * 30, min_workers=1), Lane("long", math.inf, min_workers=1))
    common = dict(deadlines=deadlines, burst_jitter_s=0.0, max_starting=workers)
    print(f"[mixed] SYNTHETIC sleep episodes: {episodes} ({len(shorts)} short ~{short_s:g} s, "
          f"{episodes - len(shorts)} long ~{long_s:g} s), {workers} workers", file=sys.stderr)
    reports = {}
    liar = mixed_jobs(episodes, short_s, long_s, mislabelled=True)
    for name, jobset, config in (("short alone", shorts, SchedulerConfig(lanes=lanes, **common)),
                                 ("FIFO", jobs, SchedulerConfig.fifo(**common)),
                                 ("lanes", jobs, SchedulerConfig(lanes=lanes, **common)),
                                 ("mislabelled", liar, SchedulerConfig(lanes=lanes, **common))):
        started = time.monotonic()
        reports[name] = run(jobset, workers, config)
        print(f"[mixed] {name}: {time.monotonic() - started:.1f} s", file=sys.stderr)
    total_work = sum(j.payload for j in jobs)
    bound = total_work / workers
    rows = {}
    for name, report in reports.items():
        latencies = [o.latency_s for o in report.outcomes if o.task_id.startswith("short")]
        rows[name] = {"p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99),
                      "makespan": report.makespan_s, "utilisation": report.utilisation,
                      "statuses": report.by_status(), "counters": report.counters}
    alone_p99 = rows["short alone"]["p99"]
    print()
    print(f"Mixed workload (synthetic sleep episodes), {episodes} episodes, {workers} workers, "
          f"lower bound on makespan {bound:.2f} s")
    print("(mislabelled: lanes, with one long task's document claiming it is short)")
    print(f"{'run':<12} {'short p50 s':>11} {'short p99 s':>11} {'p99/alone':>9} {'makespan s':>10} "
          f"{'/bound':>7} {'util':>6}")
    for name, row in rows.items():
        ratio = row["makespan"] / bound if name != "short alone" else float("nan")
        print(f"{name:<12} {row['p50']:>11.3f} {row['p99']:>11.3f} {row['p99'] / alone_p99:>9.2f} "
              f"{row['makespan']:>10.2f} {ratio:>7.3f} {row['utilisation']:>6.1%}")
    lanes_row, fifo_row = rows["lanes"], rows["FIFO"]
    checks = {"short p99 under the mix <= 1.5x alone": lanes_row["p99"] / alone_p99 <= 1.5,
              "makespan <= 1.1x lower bound": lanes_row["makespan"] / bound <= 1.1,
              "utilisation >= 90%": lanes_row["utilisation"] >= 0.9}
    print(f"lanes vs FIFO: short p99 {fifo_row['p99'] / lanes_row['p99']:.1f}x lower, "
          f"makespan {lanes_row['makespan'] / fifo_row['makespan']:.3f}x; "
          f"stolen {lanes_row['counters'].get('stolen', 0)}; mislabelled run: "
          f"{rows['mislabelled']['counters'].get('rerouted', 0)} episodes rerouted to the long lane")
    for what, ok in checks.items():
        print(f"  target {what}: {'met' if ok else 'MISSED'}")
    if args.png:
        plot(reports["lanes"], reports["FIFO"], args.png, episodes, workers)
        print(f"plot: {args.png}")
    return rows


def plot(lanes: agentenv.RunReport, fifo: agentenv.RunReport, path: str, episodes: int, workers: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    colours = {"short": "tab:blue", "long": "tab:orange", "fifo": "tab:gray"}
    for report, label in ((lanes, "lanes"), (fifo, "FIFO")):
        times = [t for t, _ in report.timeline] + [report.makespan_s]
        for lane in report.timeline[0][1]:
            owned = [point[lane][0] for _, point in report.timeline]
            running = [point[lane][1] for _, point in report.timeline]
            queued = [point[lane][2] for _, point in report.timeline]
            style = "-" if label == "lanes" else ":"
            c = colours.get(lane, "tab:green")
            if label == "lanes":
                axes[0].step(times, owned + owned[-1:], where="post", color=c, linestyle="--", alpha=0.6,
                             label=f"{lane}: slots owned")
            axes[0].step(times, running + running[-1:], where="post", color=c, linestyle=style,
                         label=f"{label} {lane}: running")
            axes[1].step(times, queued + queued[-1:], where="post", color=c, linestyle=style,
                         label=f"{label} {lane}: queued")
    axes[0].set_ylabel("workers")
    axes[0].set_title(f"Lanes vs FIFO, {episodes} synthetic episodes (90% short, 10% long), {workers} workers")
    axes[1].set_ylabel("queue depth")
    axes[1].set_xlabel("seconds since submission")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)


class BurstWork:
    """Opens a real sandbox, runs ``true`` in it, closes it; counts sandboxes being created at once."""

    def __init__(self, backend: agentenv.SandboxBackend, request: agentenv.SandboxRequest):
        self.backend, self.request = backend, request
        self.lock = threading.Lock()
        self.creating = self.max_creating = 0
        self.boxes: list = []

    def __call__(self, payload: int, ctx: agentenv.AttemptContext) -> int:
        with self.lock:
            self.creating += 1
            self.max_creating = max(self.max_creating, self.creating)
        try:
            box = self.backend.open(self.request)
        finally:
            with self.lock:
                self.creating -= 1
        with self.lock:
            self.boxes.append(box)
        ctx.on_cancel(box.close)
        try:
            ctx.enter("agent")
            result = box.exec("true")
            if result.exit_code != 0:
                raise agentenv.SandboxError(f"`true` exited {result.exit_code}: {result.stderr[:200]}")
        finally:
            box.close()
        return payload


def burst(args: argparse.Namespace) -> dict:
    task = next(t for t in agentenv.find_suite("examples").load() if t.task_id == "examples.fizzbuzz")
    runtime = agentenv.registry().runtime_for(task.environment.runtime).prepare(task.environment)
    backend = agentenv.get_backend("namespace")
    request = agentenv.SandboxRequest(runtime, None, "/app", agentenv.Limits(wall_time_s=30, memory_mb=256))
    cap = args.admission
    work = BurstWork(backend, request)
    jobs = [EpisodeJob(("burst", i), "burst", payload=i, expected_duration_s=0.01) for i in range(args.burst)]
    config = SchedulerConfig(max_starting=cap, burst_jitter_s=0.02, deadlines=Deadlines(start_s=120, agent_s=60))
    started = time.monotonic()
    with ThreadExecutor(work, workers=args.burst_workers, name="burst") as executor:
        report = Scheduler(executor, config).run(jobs)
    wall = time.monotonic() - started
    left = sum(1 for box in work.boxes if box.alive)
    statuses = report.by_status()
    print()
    print(f"Burst (REAL namespace sandboxes: open, `true`, close): {args.burst} episodes submitted at once, "
          f"{args.burst_workers} workers, admission cap {cap}")
    print(f"  {statuses['ok']} ok, {args.burst - statuses['ok']} failed ({statuses}); {left} sandboxes left open; "
          f"at most {work.max_creating} sandboxes created at once (scheduler saw {report.counters['max_starting_seen']})"
          f"; {wall:.1f} s, {args.burst / wall:.0f} episodes/s")
    ok = statuses["ok"] == args.burst and left == 0 and work.max_creating <= cap
    print(f"  target no failure, no leak, cap respected: {'met' if ok else 'MISSED'}")
    return {"statuses": statuses, "left_open": left, "max_creating": work.max_creating, "wall_s": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the issue's durations (0.3 s / 20 s, 2,000 episodes)")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--png", default="bench/scheduler_lanes.png")
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--burst-workers", type=int, default=16)
    parser.add_argument("--admission", type=int, default=4)
    parser.add_argument("--skip", choices=("mixed", "burst"), action="append", default=[])
    args = parser.parse_args()
    if "mixed" not in args.skip:
        mixed(args)
    if "burst" not in args.skip:
        burst(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
