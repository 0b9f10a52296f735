"""Check by execution that degraded functions behave like their originals.

The tree-level checks of :mod:`agentenv_rm.transforms` prove most of it; this runs what can be run.
A sample of standard-library functions (module level, undecorated, at most four required
arguments) is called with the same arguments in every version. Calling library functions with
arbitrary arguments may write files, spawn processes or loop, so it happens inside an agentenv
sandbox (no network, a private workspace, the task limits), through the public backend API.
"""

from __future__ import annotations

import json
import os
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

import agentenv

from .dataset import Record

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_behaviour_probe.py")


@dataclass
class BehaviourReport:
    functions: int = 0  # run (not skipped)
    informative: int = 0  # deterministic, and returned normally at least once
    variants: int = 0  # degraded versions compared on informative functions
    calls: int = 0
    mismatches: list[dict[str, Any]] = field(default_factory=list)  # informative functions where a version differed
    nondeterministic: int = 0
    skipped: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def runnable(record: Record) -> bool:
    return (record.origin == "stdlib" and "." not in record.qualname and not record.original.startswith("@")
            and not record.original.startswith("async"))


def module_of(record: Record) -> str:
    parts = record.file[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def check(records: Iterable[Record], sample: int = 200, seed: int = 0, backend: str = "auto",
          timeout_s: float = 900.0) -> BehaviourReport:
    """Run a sample of *records* (those :func:`runnable`) in a sandbox; see the module docstring."""
    candidates = [r for r in records if runnable(r)]
    random.Random(seed).shuffle(candidates)
    chosen = candidates[:sample]
    report = BehaviourReport()
    if not chosen:
        return report
    cases = [{"id": r.id, "module": module_of(r), "name": r.qualname,
              "variants": {"original": r.original, **r.variants}} for r in chosen]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    task = agentenv.parse_task({"task_id": "rm.behaviour_check", "environment_config": {"runtime": version},
                                "execution_steps": [{"action": "run_command", "command": "true"}],
                                "reward_logic": {"type": "composite", "rules": [{"metric": "exit_code", "weight": 1,
                                                                                 "threshold": 1}]}})
    runtime = agentenv.registry().runtime_for(version).prepare(task.environment)
    limits = agentenv.Limits(wall_time_s=timeout_s, memory_mb=1024, max_processes=64, max_output_bytes=8 << 20)
    sandbox = agentenv.get_backend(backend).open(agentenv.SandboxRequest(runtime, None, "/app", limits))
    try:
        with open(PROBE, "rb") as f:
            sandbox.write_file("probe.py", f.read())
        sandbox.write_file("cases.json", json.dumps(cases).encode())
        result = sandbox.exec(["python", "-I", "probe.py", "cases.json"], timeout_s=timeout_s, cwd="/app")
    finally:
        sandbox.close()
    by_id = {r.id: r for r in chosen}
    for line in result.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if "skipped" in row:
            report.skipped += 1
            continue
        report.functions += 1
        report.calls += row["calls"] * (len(by_id[row["id"]].variants) + 2)
        if not row["deterministic"]:
            report.nondeterministic += 1
            continue
        if row["returned"] == 0:
            continue
        report.informative += 1
        report.variants += len(by_id[row["id"]].variants)
        if row["differs"]:
            report.mismatches.append({"function": f"{module_of(by_id[row['id']])}.{row['name']}",
                                      "kinds": row["differs"]})
    return report
