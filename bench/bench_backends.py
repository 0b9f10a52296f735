"""Backend comparison, measured side by side in one run: open + exec ``true`` + close.

    .venv/bin/python bench/bench_backends.py [--iterations N] [--json FILE]

Rows: the namespace backend (its own warm pool), docker cold (pool 0: create + start + attach per
sandbox), docker warm (a pre-started container taken from the pool; the pool is refilled between
iterations, outside the timing), and a raw ``docker run --rm --network none IMAGE true`` for
reference. Ratios are against the namespace row; ``acquire`` is the time ``open`` took alone.
Without a Docker engine only the namespace row is printed, with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import agentenv
from agentenv import SandboxRequest

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = os.path.join(HERE, "..", "tasks", "examples", "fizzbuzz", "task.json")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def cycle(backend, request, before=None) -> tuple[float, float]:
    if before:
        before()
    t0 = time.perf_counter()
    box = backend.open(request)
    t1 = time.perf_counter()
    result = box.exec("true")
    box.close()
    t2 = time.perf_counter()
    assert result.exit_code == 0, result
    return (t2 - t0) * 1000, (t1 - t0) * 1000


def measure(name, fn, n, progress) -> dict:
    fn()  # warm-up: images built, pools configured
    totals, acquires = [], []
    for i in range(n):
        total, acquire = fn()
        totals.append(total)
        acquires.append(acquire)
        progress(f"\r  {name}: {i + 1}/{n}")
    progress("\n")
    return {"name": name, "p50_ms": statistics.median(totals), "p95_ms": pct(totals, 0.95),
            "acquire_p50_ms": statistics.median(acquires) if acquires[0] is not None else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    progress = lambda s: (sys.stderr.write(s), sys.stderr.flush())  # noqa: E731
    spec = agentenv.load_task(TASK)
    runtime = agentenv.registry().runtime_for(spec.environment.runtime).prepare(spec.environment)
    request = SandboxRequest(runtime, None, spec.root, spec.limits, {"agentenv.bench": "1"})
    rows = []
    ns = agentenv.get_backend("namespace")
    rows.append(measure("namespace", lambda: cycle(ns, request), args.iterations, progress))
    try:
        from agentenv_docker import DockerBackend, images

        client = images.connect(timeout=10)
        cold, warm = DockerBackend(pool_size=0), DockerBackend(pool_size=1)
    except Exception as exc:
        print(f"docker rows skipped: {exc}")
        cold = warm = None
    if cold is not None:
        try:
            rows.append(measure("docker cold", lambda: cycle(cold, request), args.iterations, progress))
            rows.append(measure("docker warm pool", lambda: cycle(warm, request, lambda: warm.wait_warm(60)),
                                args.iterations, progress))
            image = cold.image_for(request).id
            if shutil.which("docker"):
                argv = ["docker", "run", "--rm", "--network", "none", image, "true"]
                run = lambda: (subprocess.run(argv, check=True, capture_output=True), None)[1]  # noqa: E731
            else:
                run = lambda: client.containers.run(image, ["true"], network_mode="none", remove=True)  # noqa: E731

            def raw():
                t0 = time.perf_counter()
                run()
                return (time.perf_counter() - t0) * 1000, None

            rows.append(measure("raw docker run", raw, args.iterations, progress))
        finally:
            cold.close()
            warm.close()
    base = rows[0]["p50_ms"]
    print(f"open + exec true + close, {args.iterations} iterations each (ratios: p50 / namespace p50)")
    print(f"{'backend':<18} {'p50 ms':>9} {'p95 ms':>9} {'acquire p50':>12} {'x namespace':>12}")
    for r in rows:
        acq = f"{r['acquire_p50_ms']:.2f}" if r["acquire_p50_ms"] is not None else "-"
        print(f"{r['name']:<18} {r['p50_ms']:>9.2f} {r['p95_ms']:>9.2f} {acq:>12} {r['p50_ms'] / base:>11.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
