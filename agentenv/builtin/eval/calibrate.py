"""``agentenv calibrate SUITE --agent A --samples N``: each task's measured pass rate, with a Wilson
95% interval and a difficulty band, written into the suite's sidecar ``calibration.json``.

Why a sidecar and not the task documents: a pass rate belongs to a policy, not to the task (the
author's ``difficulty`` field stays the author's judgement), it changes every time the policy does,
and several policies are calibrated side by side. So the suite folder holds one file,
``calibration.json``::

    {"schema": "agentenv-calibration/1", "suite": {"name", "version"},
     "agents": {"<agent spec>": {"created", "samples", "results": "<results.json it came from>",
                                 "bands": {"medium": 4, ...},
                                 "tasks": {"<task id>": {"samples", "successes", "pass_rate",
                                                         "ci95": [low, high], "band", "mean_reward"}}}}}

Re-calibrating an agent replaces its entry and keeps the others. Trainers read it with
``agentenv.read_calibration`` and sample with ``agentenv.Curriculum``. The episodes are played by
``agentenv eval`` (same workers, retries, resume and results.json); ``--from RESULTS`` calibrates from
an eval run already made.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import agentenv
from agentenv import CALIBRATION_FILE, DIFFICULTY_BANDS, EvalError, TaskDifficulty

from .run import EvalConfig, run_eval

SCHEMA = "agentenv-calibration/1"


def difficulties(results: dict[str, Any]) -> dict[str, TaskDifficulty]:
    """Task id -> difficulty from an eval ``results.json`` (masked episodes are not samples)."""
    out = {}
    for task in results.get("tasks", []):
        if task.get("scored", 0) > 0:
            out[task["task_id"]] = TaskDifficulty(task["task_id"], int(task["scored"]), int(task["successes"]),
                                                  task.get("mean_reward"))
    return out


def write_calibration(suite_dir: str, suite: dict[str, Any], agent: str, found: dict[str, TaskDifficulty],
                      samples: int, source: str) -> str:
    """Merge one agent's calibration into ``suite_dir/calibration.json`` (atomically); return its path."""
    path = os.path.join(suite_dir, CALIBRATION_FILE)
    doc: dict[str, Any] = {"schema": SCHEMA, "suite": suite, "agents": {}}
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
            if isinstance(old, dict) and old.get("suite", {}).get("name") == suite["name"]:
                doc["agents"] = dict(old.get("agents") or {})
        except ValueError:
            pass  # an unreadable file is replaced, not merged
    bands = {b: 0 for b in DIFFICULTY_BANDS}
    for d in found.values():
        bands[d.band] += 1
    doc["suite"] = suite
    doc["agents"][agent] = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "samples": samples,
                            "results": source, "bands": bands,
                            "tasks": {tid: found[tid].to_json() for tid in sorted(found)}}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return path


def render(found: dict[str, TaskDifficulty]) -> str:
    width = max([len("task")] + [len(t) for t in found])
    lines = [f"{'task':<{width}}  {'pass':>9}  {'rate':>5}  {'95% interval':>13}  band"]
    for tid in sorted(found, key=lambda t: (found[t].pass_rate, t)):
        d = found[tid]
        low, high = d.interval
        lines.append(f"{tid:<{width}}  {d.successes:>4}/{d.samples:<4}  {d.pass_rate:5.2f}  [{low:.2f}, {high:.2f}]  {d.band}")
    return "\n".join(lines)


def configure(p) -> None:
    p.add_argument("suite", metavar="SUITE", help="an installed suite name or a suite folder (the sidecar goes there)")
    p.add_argument("--agent", required=True, help="agent NAME[:ARG], as for agentenv eval")
    p.add_argument("--samples", "-n", type=int, default=8, help="episodes per task (default 8)")
    p.add_argument("--workers", "-w", type=int, default=1, help="concurrent sandboxes")
    p.add_argument("--tasks", default="", metavar="GLOB[,GLOB...]", help="only the tasks whose id matches")
    p.add_argument("--backend", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, metavar="DIR", help="the eval output folder (default out/calibrate-SUITE-AGENT)")
    p.add_argument("--from", dest="results", default=None, metavar="RESULTS",
                   help="calibrate from an existing results.json instead of playing episodes")
    p.add_argument("--quiet", "-q", action="store_true")


def run(args) -> int:
    suite = agentenv.find_suite(args.suite)
    if args.results:
        try:
            with open(args.results, encoding="utf-8") as f:
                results = json.load(f)
        except (OSError, ValueError) as exc:
            raise EvalError(f"--from {args.results}: cannot read an eval results.json ({exc})") from None
        if results.get("suite", {}).get("name") != suite.name:
            raise EvalError(f"--from {args.results}: it is a run of suite {results.get('suite', {}).get('name')!r}, "
                            f"not {suite.name!r}")
        agent, samples, source = results.get("agent", {}).get("spec", args.agent), results["config"]["samples"], args.results
    else:
        if args.samples < 1:
            raise EvalError("--samples must be at least 1")
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in f"{suite.name}-{args.agent}")[:80]
        config = EvalConfig(suite=suite, agent=args.agent, out=args.out or os.path.join("out", f"calibrate-{safe}"),
                            samples=args.samples, ks=(1,), workers=args.workers, backend=args.backend,
                            tasks=tuple(p for p in args.tasks.split(",") if p), seed=args.seed, progress=not args.quiet)
        outcome = run_eval(config)
        if outcome.interrupted:
            print(f"interrupted: nothing written; rerun with --out {config.out} to resume")
            return 130
        results, agent, samples, source = outcome.results, args.agent, args.samples, outcome.paths["results"]
    found = difficulties(results)
    if not found:
        raise EvalError("no task produced a scored episode (every one was masked by infrastructure failures)")
    path = write_calibration(suite.path, {"name": suite.name, "version": suite.version}, agent, found, samples, source)
    print(agentenv.visible(render(found)))
    counts = ", ".join(f"{b} {n}" for b, n in json.load(open(path))["agents"][agent]["bands"].items() if n)
    print(f"wrote {path} ({agent}: {counts})")
    return 0
