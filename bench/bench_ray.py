"""The overhead of running episodes on Ray, measured side by side in one run.

REAL sandboxed episodes (the ``examples`` suite with the reference agent, ``--samples`` each) run
through the same scheduler on two executors with the same number of workers: local threads, and
Ray actors on a 2-node local cluster (``ray.cluster_utils.Cluster``, half the CPUs on each node).
Both executors first play one untimed round (each worker builds its environments and warms its
sandbox pool; Ray also ships the task folders and runtimes), then the timed run. The machine's
cores are the same in both, so the ratio of wall times is Ray's overhead (target: at most 1.2x).
Printed for 1, 2, 4 and 8 workers: episodes/s on each executor and the ratio::

    .venv/bin/python bench/bench_ray.py [--samples 2] [--workers 1,2,4,8]
"""

from __future__ import annotations

import argparse
import sys
import time

import agentenv
from agentenv import EpisodeWork, Scheduler, SchedulerConfig, ThreadExecutor, rollout_job


def timed(executor: agentenv.Executor, jobs: list) -> tuple[float, agentenv.RunReport]:
    started = time.monotonic()
    report = Scheduler(executor, SchedulerConfig()).run(jobs)
    wall = time.monotonic() - started
    bad = [o for o in report.outcomes if o.status != "ok"]
    if bad:  # (whether the reference *succeeds* can depend on load: fast_primes has a speed rule)
        raise SystemExit(f"episode {bad[0].key} failed: {bad[0].status} {bad[0].error}")
    return wall, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--workers", default="1,2,4,8")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]

    import ray
    from ray.cluster_utils import Cluster

    from agentenv_ray import RayExecutor

    tasks = agentenv.find_suite("examples").load()
    jobs = [rollout_job(t, s, "single_shot" if t.single_shot_path else "agentic", seed=s)
            for t in tasks for s in range(args.samples)]
    work = EpisodeWork("reference", backend="namespace")
    half = max(1, max(counts) // 2)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": half})
    rows = []
    try:
        cluster.add_node(num_cpus=half)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        for workers in counts:
            warmup = [rollout_job(t, 1000 + i, "single_shot" if t.single_shot_path else "agentic", seed=i)
                      for i in range(workers) for t in tasks[:1]]
            with ThreadExecutor(work, workers=workers) as local:
                timed(local, warmup)
                local_wall, _ = timed(local, jobs)
            with RayExecutor(work, workers=workers) as remote:
                nodes = len(remote.nodes())
                remote.prepare(tasks)
                timed(remote, warmup)
                ray_wall, _ = timed(remote, jobs)
            rows.append((workers, nodes, local_wall, ray_wall))
            print(f"[ray] {workers} workers: local {local_wall:.1f} s, ray ({nodes} nodes) {ray_wall:.1f} s",
                  file=sys.stderr)
    finally:
        ray.shutdown()
        cluster.shutdown()
    n = len(jobs)
    print()
    print(f"Ray overhead: {n} REAL sandboxed episodes (examples suite x {args.samples}, reference agent), "
          "same scheduler, same machine")
    print(f"{'workers':>7} {'ray nodes':>9} {'local ep/s':>10} {'ray ep/s':>9} {'ray/local wall':>14}")
    for workers, nodes, local_wall, ray_wall in rows:
        print(f"{workers:>7} {nodes:>9} {n / local_wall:>10.2f} {n / ray_wall:>9.2f} {ray_wall / local_wall:>14.2f}")
    worst = max(r[3] / r[2] for r in rows)
    print(f"  target ray/local <= 1.2x: {'met' if worst <= 1.2 else 'MISSED'} (worst {worst:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
