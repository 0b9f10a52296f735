"""``agentenv bench``: what one sandbox costs, measured side by side in one run.

Rows (each ``open + exec(["true"]) + close`` unless said otherwise):

* the floor: a plain ``posix_spawn`` + wait of /bin/true, no isolation at all;
* the namespace backend with its warm pool, paced so that the pool refills between episodes (an RL
  loop spends the policy's time between resets), and back to back;
* the namespace backend without a pool (every open builds namespaces and mounts);
* ``docker run --rm --network none IMAGE true`` where a Docker engine and a local image exist;
* the memory an idle sandbox costs: USS (Private_Clean + Private_Dirty) of its init and keeper
  processes; the zygote is shared by every sandbox and reported on its own.

Ratios, not absolute times, are the result: the machine is shared and noisy.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

from agentenv import Limits, RuntimeEnv, SandboxRequest, materialize

from ._nszygote import REFILL_DELAY_S
from .namespace import NamespaceBackend

TARGET_P50_MS = 5.0
TARGET_DOCKER_RATIO = 50.0
TARGET_IDLE_MB = 10.0


def _progress(text: str) -> None:
    print(f"bench: {text}", file=sys.stderr, flush=True)


def _percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(ordered), "p50_ms": statistics.median(ordered), "p95_ms": p95, "min_ms": ordered[0]}


def _time(fn: Callable[[], None], n: int, pace_s: float = 0.0, label: str = "") -> dict[str, float]:
    samples = []
    step = max(n // 4, 1)
    for i in range(n):
        if pace_s:
            time.sleep(pace_s)
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
        if label and (i + 1) % step == 0:
            _progress(f"{label}: {i + 1}/{n}")
    return _percentiles(samples)


def _floor() -> None:
    pid = os.posix_spawn("/bin/true", ["/bin/true"], {})
    os.waitpid(pid, 0)


def uss_mb(pid: int) -> float:
    """Memory only this process holds (Private_Clean + Private_Dirty), in MiB."""
    total_kb = 0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Private_Clean", "Private_Dirty"):
                total_kb += int(rest.split()[0])
    return total_kb / 1024


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _docker_row(n: int) -> tuple[dict[str, Any] | None, str]:
    """Figures for ``docker run --rm --network none IMAGE true``, or why there are none."""
    docker = shutil.which("docker")
    if docker is None:
        return None, "no docker CLI on PATH"
    try:
        info = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                              timeout=20)
    except subprocess.TimeoutExpired:
        return None, "`docker info` timed out: is the engine hung?"
    if info.returncode != 0 or not info.stdout.strip():
        return None, ("no Docker engine answers (start one: `dockerd --storage-driver=overlay2 --iptables=false "
                      "--bridge=none &`)")
    image = os.environ.get("AGENTENV_BENCH_DOCKER_IMAGE")
    if not image:
        listed = subprocess.run([docker, "images", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True,
                                text=True, timeout=30).stdout.split()
        listed = [i for i in listed if "<none>" not in i]
        if not listed:
            return None, "the Docker engine has no local image (set AGENTENV_BENCH_DOCKER_IMAGE or docker import one)"
        image = listed[0]
    argv = [docker, "run", "--rm", "--network", "none", image, "true"]
    probe = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return None, f"`{' '.join(argv[1:])}` failed: {probe.stderr.strip()[:200]}"

    def run() -> None:
        subprocess.run(argv, capture_output=True, check=True, timeout=120)

    row = _time(run, n, label="docker run")
    row["image"] = image
    return row, ""


def _workspace(tmp: str) -> str:
    files = {"main.py": b"print('hello')\n", "tests/test_main.py": b"def test_ok():\n    assert True\n",
             "README.md": b"# bench\n"}
    return materialize(files, tmp)


def run_bench(iterations: int) -> dict[str, Any]:
    ok = NamespaceBackend.availability()
    if not ok.ok:
        return {"error": f"the namespace backend cannot run here: {ok.reason}"}
    n = max(iterations, 5)
    figures: dict[str, Any] = {"iterations": n, "rows": {}, "skipped": {}, "targets": {}}
    rows = figures["rows"]
    tmp = tempfile.mkdtemp(prefix="agentenv-bench-")
    try:
        request = SandboxRequest(RuntimeEnv("shell"), _workspace(tmp), "/app", Limits())

        def episode(backend) -> Callable[[], None]:
            def once() -> None:
                box = backend.open(request)
                try:
                    result = box.exec(["true"])
                finally:
                    box.close()
                if result.exit_code != 0:
                    raise RuntimeError(f"`true` failed in the sandbox: {result}")
            return once

        _progress("floor: posix_spawn /bin/true")
        _floor()
        rows["fork+exec /bin/true (no isolation)"] = _time(_floor, n)

        cold = NamespaceBackend(pool_size=0)
        try:
            episode(cold)()  # starts the zygote
            rows["namespace, no pool"] = _time(episode(cold), n, label="namespace, no pool")
        finally:
            cold.close()
        # The pool refills once the caller has been away a moment (REFILL_DELAY_S); give it that,
        # plus twice what a cold open costs.
        pace_s = REFILL_DELAY_S + max(0.01, 2 * rows["namespace, no pool"]["p50_ms"] / 1000)
        warm = NamespaceBackend(pool_size=1)
        try:
            episode(warm)()
            time.sleep(pace_s)
            row = _time(episode(warm), n, pace_s=pace_s, label="namespace, warm pool")
            row["pace_ms"] = pace_s * 1000
            rows["namespace, warm pool (paced)"] = row
            rows["namespace, warm pool (back to back)"] = _time(episode(warm), n, label="namespace, back to back")

            _progress("idle sandbox memory")
            idle = []
            for _ in range(3):
                time.sleep(pace_s)
                box = warm.open(request)
                try:
                    box.exec(["true"])
                    time.sleep(0.05)
                    keeper = _parent(box.init_pid)
                    idle.append({"init_mb": uss_mb(box.init_pid), "keeper_mb": uss_mb(keeper)})
                finally:
                    box.close()
            best = min(idle, key=lambda m: m["init_mb"] + m["keeper_mb"])
            figures["idle_memory"] = {**best, "sandbox_mb": best["init_mb"] + best["keeper_mb"],
                                      "zygote_mb (shared)": uss_mb(warm._zygote.proc.pid)}
        finally:
            warm.close()

        docker_n = max(5, min(n, 30))
        _progress(f"docker run ({docker_n} runs, if an engine is present)")
        docker, why = _docker_row(docker_n)
        if docker is not None:
            rows["docker run --rm --network none IMAGE true"] = docker
        else:
            figures["skipped"]["docker run --rm --network none IMAGE true"] = why
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    floor = rows["fork+exec /bin/true (no isolation)"]["p50_ms"]
    warm_p50 = rows["namespace, warm pool (paced)"]["p50_ms"]
    ratios = {
        "namespace warm / floor": warm_p50 / floor,
        "namespace no pool / namespace warm": rows["namespace, no pool"]["p50_ms"] / warm_p50,
    }
    targets = figures["targets"]
    targets[f"warm p50 <= {TARGET_P50_MS:g} ms"] = warm_p50 <= TARGET_P50_MS
    targets[f"idle sandbox <= {TARGET_IDLE_MB:g} MB"] = figures["idle_memory"]["sandbox_mb"] <= TARGET_IDLE_MB
    if docker is not None:
        ratios["docker run / namespace warm"] = docker["p50_ms"] / warm_p50
        ratios["docker run / namespace no pool"] = docker["p50_ms"] / rows["namespace, no pool"]["p50_ms"]
        targets[f"docker run / namespace warm >= {TARGET_DOCKER_RATIO:g}x"] = (
            ratios["docker run / namespace warm"] >= TARGET_DOCKER_RATIO)
    figures["ratios"] = ratios
    return figures


def format_table(figures: dict[str, Any]) -> str:
    lines = [f"open + exec(['true']) + close, {figures['iterations']} iterations each",
             f"{'':44} {'p50 ms':>9} {'p95 ms':>9} {'min ms':>9}"]
    for name, row in figures["rows"].items():
        extra = f"  (paced {row['pace_ms']:.0f} ms)" if "pace_ms" in row else ""
        extra += f"  ({row['image']}, {row['n']} runs)" if "image" in row else ""
        lines.append(f"{name:44} {row['p50_ms']:9.2f} {row['p95_ms']:9.2f} {row['min_ms']:9.2f}{extra}")
    for name, why in figures["skipped"].items():
        lines.append(f"{name:44} {'skipped':>9}  ({why})")
    mem = figures["idle_memory"]
    lines += ["", "idle sandbox memory (USS, MiB): "
              f"init {mem['init_mb']:.2f} + keeper {mem['keeper_mb']:.2f} = {mem['sandbox_mb']:.2f}; "
              f"zygote (shared by all) {mem['zygote_mb (shared)']:.2f}", "", "ratios (p50):"]
    lines += [f"  {name:40} {value:8.1f}x" for name, value in figures["ratios"].items()]
    lines += ["", "targets:"]
    lines += [f"  {'met ' if met else 'MISSED'}  {name}" for name, met in figures["targets"].items()]
    return "\n".join(lines)


def main(iterations: int = 200, json_out: str | None = None) -> int:
    """Run the benchmark, print the table, write the figures to *json_out*; 0 when every target is met."""
    figures = run_bench(iterations)
    if "error" in figures:
        print(f"agentenv bench: {figures['error']}", file=sys.stderr)
        return 2
    print(format_table(figures))
    if json_out:
        with open(json_out, "w") as f:
            json.dump(figures, f, indent=1)
        print(f"figures written to {json_out}")
    return 0 if all(figures["targets"].values()) else 1
