"""Task quality audit: run a task many times through the real environment and judge it.

A low-quality task teaches a policy the wrong thing: a flaky test rewards luck, a trivial task
rewards doing nothing, a hackable task rewards deleting the tests. ``audit_task`` runs these checks
on one task, each through :class:`agentenv.CodingEnv` exactly as a policy would meet it:

==============  ==========================================================================
check           what fails it
==============  ==========================================================================
schema          the document is invalid, or a runtime / action / metric / reward model is
                not provided by any installed plugin
reference       the reference solution misses full marks in any of N identical runs
stability       a test's outcome differs between identical runs of the reference (flaky);
                with ``quarantine`` it is a warning and the cleaned task deselects the test
trivial         the unchanged workspace scores above 0, or fails no scored test
hacking         a reward-hacking probe (deleted tests, skip-everything conftest, exit at
                import, fake reports, printing "passed", ...) scores above 0
gates           (warning) a lower-is-better rule with no gate: an empty program can win it
reward_models   a failing episode (the no-op, a probe) scores as much as the reference: a reward
                model lets a failing solution beat a passing one
determinism     the reference's rule scores differ between runs (beyond ``tolerance`` for
                rules on noisy timing metrics, which only warn)
budget          the reference times out / runs out of memory, or its p95 is above the limit
                (warning when the limit is less than ``margin`` times the p95)
duration        (warning) ``expected_duration_s`` is missing or off by more than
                ``duration_factor`` from the measured episode time
leakage         a hidden test or reference file is readable from the agent's sandbox
==============  ==========================================================================

A check's status is ``pass``, ``warn``, ``fail``, ``error`` (the machinery failed, so the check
could not be made: never the task's fault) or ``skip``. A task's verdict is ``reject`` when any
check fails, ``warn`` when any warns or errs, else ``ok``.

Probes marked ``harness`` exploit a weakness of the evaluation itself (every task shares it), so by
default they warn instead of rejecting; ``strict`` makes them reject.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shlex
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import gymnasium as gym

import agentenv
from agentenv import (AGENTIC, PLACEHOLDER, SINGLE_SHOT, AuditError, InfrastructureError, ScriptedAgent, TaskSpec,
                      TaskSpecError, UnknownNameError)

from .probes import _FORGE_AND_EXIT, _REPORT_OVERWRITE, PROBES, Probe, _Fakes, _fakes, _kind
from .report import _EPS, _TEST_METRICS, CHECKS, AuditConfig, AuditReport, Check, TaskAudit

# --------------------------------------------------------------------------- finding tasks

def collect_tasks(paths: Sequence[str]) -> list[tuple[str, str | None]]:
    """(task file, suite name) for task files, directories (a suite.json, or searched for task
    files) and installed suite names."""
    out: list[tuple[str, str | None]] = []
    for path in paths:
        if os.path.isfile(path):
            out.append((path, None))
        elif os.path.isdir(path) and os.path.isfile(os.path.join(path, "suite.json")):
            suite = agentenv.read_suite(path)
            out += [(f, suite.name) for f in suite.task_files]
        elif os.path.isdir(path):
            found = agentenv.task_files([path])
            if not found:
                raise AuditError(f"{path}: no task files (*.json) below this directory")
            out += [(f, None) for f in found]
        else:
            try:
                suite = agentenv.find_suite(path)
            except UnknownNameError as exc:
                raise AuditError(f"{path}: not a task file, a directory or an installed suite ({exc})") from None
            out += [(f, suite.name) for f in suite.task_files]
    seen, unique = set(), []
    for f, s in out:
        key = os.path.abspath(f)
        if key not in seen:
            seen.add(key)
            unique.append((f, s))
    return unique


# --------------------------------------------------------------------------- episodes

@dataclass
class _Episode:
    score: float = 0.0
    success: bool = False
    masked: bool = False
    infra_error: str | None = None
    breakdown: dict[str, Any] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # metrics of every scored run
    seconds: float = 0.0
    outputs: list[str] = field(default_factory=list)

    def rule_scores(self) -> dict[int, float]:
        return {int(k.split(":", 1)[0]): float(v["score"]) for k, v in self.breakdown.items()}


class _Player:
    """One environment per mode (built as RL users build them, with ``gym.make``), reused across
    the task's episodes, played by a scripted agent through the one episode loop."""

    def __init__(self, task: TaskSpec, backend: str):
        self.task, self.backend = task, backend
        self._envs: dict[str, Any] = {}

    def env(self, mode: str):
        if mode not in self._envs:
            self._envs[mode] = gym.make("agentenv/Task-v0", task=self.task, backend=self.backend, mode=mode)
        return self._envs[mode]

    def play(self, mode: str, actions: Sequence[Any], submit: bool = True) -> _Episode:
        """Reset, send *actions* (a code string single-shot), end with submit; the final info."""
        env = self.env(mode)
        result = agentenv.run_episode(env, ScriptedAgent(actions, submit))
        info = result.info
        ep = _Episode()
        ep.outputs = [step["output"] for step in result.steps]
        ep.seconds = result.wall_time_s
        ep.masked = result.reward_masked
        ep.infra_error = result.infra_error
        ep.score = float(info.get("score", 0.0))
        ep.success = bool(info.get("success"))
        ep.breakdown = dict(info.get("reward_breakdown") or {})
        ep.runs = env.unwrapped.scored_runs if result.steps else []
        return ep

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()


# --------------------------------------------------------------------------- the audit of one task

def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _stats(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"p50": round(_percentile(values, 50), 3), "p95": round(_percentile(values, 95), 3),
            "max": round(max(values), 3), "n": len(values)}


def _outcomes(ep: _Episode) -> dict[tuple[int, str], str]:
    out = {}
    for k, run in enumerate(ep.runs):
        for node, outcome in (run.get("test_outcomes") or {}).items():
            out[(k, node)] = outcome
    return out


def _full_marks(task: TaskSpec, ep: _Episode, noisy: set[str]) -> bool:
    """Success, and every rule not on a noisy metric and not a reward model at its maximum (a
    linear timing rule can never reach 1, and a fuzzy score rarely does: they are judged by
    determinism, budget and the reward-model check instead)."""
    if ep.masked or not ep.success:
        return False
    scores = ep.rule_scores()
    for i, rule in enumerate(task.reward.rules):
        if rule.metric in noisy or rule.reward_model is not None:
            continue
        if scores.get(i, 0.0) < 1.0 - _EPS:
            return False
    return True


def audit_task(path: str, config: AuditConfig = AuditConfig(), suite: str | None = None,
               progress: Callable[[str], None] | None = None) -> TaskAudit:
    """Audit the task file at *path*. ``progress(label)`` is called after every episode."""
    start = time.monotonic()
    tick = progress or (lambda label: None)
    audit = TaskAudit(path=path, task_id=None, suite=suite)
    try:
        task = agentenv.load_task(path, suite=suite)
    except TaskSpecError as exc:
        audit.checks.append(Check("schema", "fail", f"{len(exc.violations)} problem(s) in the task document",
                                  {"violations": [str(v) for v in exc.violations]}))
        audit.seconds = time.monotonic() - start
        return audit
    audit.task_id = task.task_id
    schema = _check_resolution(task)
    audit.checks.append(schema)
    if schema.status == "fail":
        audit.seconds = time.monotonic() - start
        return audit
    player = _Player(task, config.backend)
    try:
        try:
            player.env(AGENTIC)
        except InfrastructureError as exc:
            audit.checks.append(Check("reference", "error", f"the environment could not be built: {exc}"))
            return audit
        _audit_episodes(task, audit, player, config, tick)
    finally:
        player.close()
        audit.checks.sort(key=lambda c: CHECKS.index(c.name))
        audit.seconds = time.monotonic() - start
    return audit


def _check_resolution(task: TaskSpec) -> Check:
    reg = agentenv.registry()
    problems, resolved = [], {}
    try:
        resolved["runtime"] = type(reg.runtime_for(task.environment.runtime)).__name__
    except UnknownNameError as exc:
        problems.append(f"/environment_config/runtime: {exc}")
    for i, step in enumerate(task.execution_steps):
        try:
            reg.action(step["action"])
        except UnknownNameError as exc:
            problems.append(f"/execution_steps/{i}/action: {exc}")
    for i, rule in enumerate(task.reward.rules):
        for name in filter(None, (rule.metric, rule.gate.metric if rule.gate else None)):
            if name not in reg.metrics:
                problems.append(f"/reward_logic/rules/{i}: unknown metric {name!r}")
        if rule.reward_model and rule.reward_model not in reg.reward_models:
            problems.append(f"/reward_logic/rules/{i}/reward_model: unknown reward model {rule.reward_model!r}")
    if not any(s["action"] == "run_command" for s in task.execution_steps):
        problems.append("/execution_steps: no run_command step, so nothing is ever measured; add the command "
                        "that runs the tests")
    if problems:
        return Check("schema", "fail", "; ".join(problems), {"problems": problems})
    return Check("schema", "pass", f"valid; runtime {task.environment.runtime} by {resolved['runtime']}",
                 {"runtime": task.environment.runtime, "actions": sorted({s["action"] for s in task.execution_steps}),
                  "metrics": sorted({r.metric for r in task.reward.rules if r.metric})})


def _audit_episodes(task: TaskSpec, audit: TaskAudit, player: _Player, config: AuditConfig,
                    tick: Callable[[str], None]) -> None:
    reg = agentenv.registry()
    noisy = {n for n, m in reg.metrics.items() if m.noisy}
    primary = SINGLE_SHOT if task.single_shot_path else AGENTIC
    label = task.task_id

    # ---- the reference, N times
    refs: list[_Episode] = []
    code = task.reference_code()
    if task.reference_solution is None or (primary == SINGLE_SHOT and code is None):
        missing = ("no reference_solution" if task.reference_solution is None
                   else f"the reference solution has no {task.single_shot_path}")
        audit.checks.append(Check("reference", "fail", f"{missing}: the audit cannot prove the task solvable; "
                                  "add reference_solution.directory with the solved files"))
        for _ in range(config.runs):
            tick(label)
    else:
        if primary == SINGLE_SHOT:
            actions: list[Any] = [code]
        else:
            actions = [{"action": "overwrite_file", "path": p, "content": c}
                       for p, c in sorted(task.reference_files().items())]
        for _ in range(config.runs):
            refs.append(player.play(primary, actions))
            tick(label)
    good = [e for e in refs if not e.masked]
    masked = [e for e in refs if e.masked]

    flaky = _stability(task, audit, good, config)
    if refs:
        _reference(task, audit, refs, good, masked, noisy, flaky, config, primary)
        _determinism(task, audit, good, noisy, flaky, config)
        _budget(task, audit, good, config)

    # ---- the no-op
    noop_actions: list[Any] = ([task.workspace.read().get(task.single_shot_path, b"").decode("utf-8", "replace")]
                               if primary == SINGLE_SHOT else [])
    noop = player.play(primary, noop_actions)
    tick(label)
    _trivial(audit, noop)

    # ---- hacking probes and the static gate check
    nodes = {n for e in good for (_, n) in _outcomes(e)}
    probes = _hacking(task, audit, player, config, primary, _fakes(nodes), tick, 0.0 if noop.masked else noop.score)
    _gates(task, audit, reg)
    _reward_models(task, audit, good, [noop, *probes])

    # ---- leakage
    _leakage(task, audit, player)
    tick(label)


def _stability(task: TaskSpec, audit: TaskAudit, good: list[_Episode], config: AuditConfig) -> list[dict[str, Any]]:
    if not good:
        audit.checks.append(Check("stability", "skip", "no reference run completed"))
        return []
    per_run = [_outcomes(e) for e in good]
    keys = sorted({k for o in per_run for k in o})
    table, flaky = [], []
    for key in keys:
        outcomes = [o.get(key, "missing") for o in per_run]
        row = {"test": key[1], "command": key[0], "outcomes": outcomes, "flaky": len(set(outcomes)) > 1}
        table.append(row)
        if row["flaky"]:
            flaky.append(row)
    audit.stability = table
    if not keys:
        audit.checks.append(Check("stability", "skip", "the scored commands produced no test report"))
        return []
    if len(good) < 2:
        audit.checks.append(Check("stability", "skip", "one run only: stability needs --runs 2 or more",
                                  {"tests": len(keys)}))
        return []
    if not flaky:
        audit.checks.append(Check("stability", "pass", f"{len(keys)} test(s), same outcome in all {len(good)} runs",
                                  {"tests": len(keys), "runs": len(good)}))
        return []
    names = ", ".join(r["test"] for r in flaky)
    evidence = {"flaky": [{"test": r["test"], "command": r["command"], "outcomes": r["outcomes"]} for r in flaky],
                "runs": len(good)}
    if config.quarantine:
        audit.quarantined = [{"test": r["test"], "command": r["command"]} for r in flaky]
        audit.checks.append(Check("stability", "warn", f"flaky test(s) quarantined: {names}", evidence))
    else:
        audit.checks.append(Check("stability", "fail", f"flaky test(s), outcome differs between identical runs: "
                                  f"{names} (fix them, or pass --quarantine to deselect them)", evidence))
    return flaky


def _reference(task, audit, refs, good, masked, noisy, flaky, config, mode) -> None:
    flaky_keys = {(r["command"], r["test"]) for r in flaky}
    full = [e for e in good if _full_marks(task, e, noisy)]
    evidence: dict[str, Any] = {"mode": mode, "runs": len(refs), "full_marks": len(full),
                                "scores": [round(e.score, 6) for e in refs], "masked": len(masked)}
    short = [e for e in good if e not in full]
    if short:
        failing = sorted({n for e in short for (k, n), o in _outcomes(e).items() if o != "passed"})
        evidence["failing_tests"] = failing
        evidence["errors"] = sorted({json.dumps(r.get("error"), sort_keys=True) for e in short for r in e.runs
                                     if r.get("error")})[:5]
    msg = f"full marks in {len(full)}/{len(refs)} runs ({mode})"
    if masked:
        evidence["infra_errors"] = sorted({str(e.infra_error) for e in masked})
    if not short and not masked:
        audit.checks.append(Check("reference", "pass", msg, evidence))
    elif not short:
        audit.checks.append(Check("reference", "error", msg + f"; {len(masked)} run(s) hit an infrastructure "
                                  "failure", evidence))
    elif config.quarantine and flaky_keys and all(
            {k for k, o in _outcomes(e).items() if o != "passed"} <= flaky_keys for e in short):
        audit.checks.append(Check("reference", "warn", msg + "; the misses are all in quarantined tests", evidence))
    else:
        tests = ", ".join(evidence.get("failing_tests", [])[:5])
        audit.checks.append(Check("reference", "fail", msg + (f"; not passing: {tests}" if tests else "")
                                  + " (a task the reference cannot solve teaches nothing)", evidence))


def _determinism(task, audit, good, noisy, flaky, config) -> None:
    if len(good) < 2:
        audit.checks.append(Check("determinism", "skip", "needs two completed reference runs"))
        return
    unstable, noisy_spread = [], []
    for i, rule in enumerate(task.reward.rules):
        scores = [e.rule_scores().get(i, 0.0) for e in good]
        spread = max(scores) - min(scores)
        if spread <= _EPS:
            continue
        row = {"rule": i, "label": rule.label, "scores": [round(s, 6) for s in scores], "spread": round(spread, 6)}
        if rule.metric in noisy:
            if spread > config.tolerance:
                noisy_spread.append(row)
        else:
            unstable.append(row)
    evidence = {"totals": [round(e.score, 6) for e in good], "tolerance": config.tolerance,
                "unstable_rules": unstable, "noisy_rules_over_tolerance": noisy_spread}
    if unstable:
        labels = ", ".join(f"{r['label']} {r['scores']}" for r in unstable)
        if config.quarantine and flaky and all(task.reward.rules[r["rule"]].metric in _TEST_METRICS for r in unstable):
            audit.checks.append(Check("determinism", "warn", f"rule scores vary only through quarantined tests: "
                                      f"{labels}", evidence))
        else:
            audit.checks.append(Check("determinism", "fail", f"the same solution gets different rule scores: "
                                      f"{labels}", evidence))
    elif noisy_spread:
        labels = ", ".join(f"{r['label']} spread {r['spread']}" for r in noisy_spread)
        audit.checks.append(Check("determinism", "warn", f"timing rule scores vary beyond the tolerance "
                                  f"{config.tolerance}: {labels}", evidence))
    else:
        audit.checks.append(Check("determinism", "pass", f"same reward in all {len(good)} runs", evidence))


def _budget(task, audit, good, config) -> None:
    limits = task.limits
    times = [float(r["execution_time_ms"]) for e in good for r in e.runs if "execution_time_ms" in r]
    memory = [float(r["peak_memory_mb"]) for e in good for r in e.runs if r.get("peak_memory_mb")]
    killed = [{"timed_out": bool(r.get("timed_out")), "oom_killed": bool(r.get("oom_killed"))}
              for e in good for r in e.runs if r.get("timed_out") or r.get("oom_killed")]
    episodes = [e.seconds for e in good]
    audit.measured = {"episode_s": _stats(episodes), "command_ms": _stats(times), "peak_memory_mb": _stats(memory)}
    if not good:
        audit.checks.append(Check("budget", "skip", "no reference run completed"))
        audit.checks.append(Check("duration", "skip", "no reference run completed"))
        return
    wall_ms = limits.wall_time_s * 1000.0
    evidence = {"wall_time_limit_ms": wall_ms, "memory_limit_mb": limits.memory_mb, "margin": config.margin,
                "command_ms": _stats(times), "peak_memory_mb": _stats(memory), "killed": killed}
    fails, warns = [], []
    if any(k["timed_out"] for k in killed):
        fails.append(f"the reference timed out (wall_time_s {limits.wall_time_s})")
    if any(k["oom_killed"] for k in killed):
        fails.append(f"the reference ran out of memory (memory_mb {limits.memory_mb})")
    for what, values, limit, unit in (("wall time", times, wall_ms, "ms"), ("peak memory", memory, limits.memory_mb, "MB")):
        if not values or not limit:
            continue
        p95 = _percentile(values, 95)
        if p95 > limit:
            fails.append(f"{what} p95 {p95:.0f} {unit} is over the limit {limit:.0f} {unit}")
        elif p95 * config.margin > limit:
            warns.append(f"{what} p95 {p95:.0f} {unit} leaves less than {config.margin:g}x headroom under the "
                         f"limit {limit:.0f} {unit} (a loaded machine will fail it)")
    if fails:
        audit.checks.append(Check("budget", "fail", "; ".join(dict.fromkeys(fails + warns)), evidence))
    elif warns:
        audit.checks.append(Check("budget", "warn", "; ".join(warns), evidence))
    else:
        p50 = _percentile(times, 50) if times else 0.0
        audit.checks.append(Check("budget", "pass", f"command p50 {p50:.0f} ms of {wall_ms:.0f} ms; peak memory "
                                  f"p95 {(_percentile(memory, 95) if memory else 0):.0f} of {limits.memory_mb} MB",
                                  evidence))
    measured = _percentile(episodes, 50)
    audit.suggested_expected_duration_s = round(max(measured, 0.1), 1)
    declared = task.expected_duration_s
    devidence = {"declared_s": declared, "measured_s": audit.measured["episode_s"], "factor": config.duration_factor,
                 "suggested_s": audit.suggested_expected_duration_s}
    if declared is None:
        audit.checks.append(Check("duration", "warn", f"no expected_duration_s; measured {measured:.2f} s "
                                  "(--fix-durations writes it)", devidence))
    elif max(declared / measured, measured / declared) > config.duration_factor:
        audit.checks.append(Check("duration", "warn", f"expected_duration_s {declared:g} s is more than "
                                  f"{config.duration_factor:g}x off the measured {measured:.2f} s "
                                  "(--fix-durations rewrites it)", devidence))
    else:
        audit.checks.append(Check("duration", "pass", f"declared {declared:g} s, measured {measured:.2f} s", devidence))


def _scored_rules(ep: _Episode) -> list[str]:
    return [v["rule"] for v in ep.breakdown.values() if float(v.get("contribution", 0)) > _EPS]


def _trivial(audit: TaskAudit, noop: _Episode) -> None:
    outcomes = _outcomes(noop)
    not_passed = sorted(n for (_, n), o in outcomes.items() if o != "passed")
    evidence = {"score": round(noop.score, 6), "tests": len(outcomes), "not_passing": not_passed[:20]}
    if noop.masked:
        audit.checks.append(Check("trivial", "error", f"the no-op run hit an infrastructure failure: {noop.infra_error}",
                                  evidence))
    elif noop.score > _EPS:
        via = ", ".join(_scored_rules(noop))
        evidence["rules_scored"] = _scored_rules(noop)
        audit.checks.append(Check("trivial", "fail", f"the unchanged workspace scores {noop.score:.3f} (via {via}): "
                                  "the task is trivial (break the workspace, make the tests demand the change, or "
                                  "gate the rule)", evidence))
    elif outcomes and not not_passed:
        audit.checks.append(Check("trivial", "fail", f"the unchanged workspace passes all {len(outcomes)} scored "
                                  "tests: the tests do not demand the change", evidence))
    else:
        detail = f"fails {len(not_passed)} of {len(outcomes)} test(s)" if outcomes else "no test report"
        audit.checks.append(Check("trivial", "pass", f"the unchanged workspace scores 0 and {detail}", evidence))


def _probe_plan(task: TaskSpec, probe: Probe, primary: str, fakes: _Fakes) -> tuple[str, list[Any]] | None:
    if probe.actions is not None:
        return AGENTIC, probe.actions(task, fakes)
    assert probe.code is not None

    pristine = task.workspace.read()

    def program(path: str, prefix: bool = True) -> str | None:
        kind = _kind(path)
        text = probe.code.get(kind) if kind else None
        if text is None:
            return None
        if text == "@REPORT_OVERWRITE@":
            text = _REPORT_OVERWRITE % (fakes.json_report, fakes.junit_report)
        text = text.replace("@FORGE@", _FORGE_AND_EXIT % (list(fakes.nodes), fakes.json_report, fakes.junit_report))
        if text.startswith("@PRISTINE@"):
            original = pristine.get(path, b"").decode("utf-8", "replace") if prefix else ""
            text = original + "\n" + text[len("@PRISTINE@"):]
        return text

    if primary == SINGLE_SHOT:
        path = task.single_shot_path or ""
        # a step that writes more than the placeholder (HumanEval's prompt) already keeps the original
        own_prefix = any(PLACEHOLDER in str(s.get("content", "")) and str(s.get("content")) != PLACEHOLDER
                         for s in task.execution_steps)
        text = program(path, prefix=not own_prefix)
        return (SINGLE_SHOT, [text]) if text is not None else None
    actions = [{"action": "overwrite_file", "path": p, "content": program(p)}
               for p in sorted(task.reference_files()) if program(p) is not None]
    return (AGENTIC, actions) if actions else None


def _hacking(task, audit, player, config, primary, fakes, tick, baseline: float) -> list[_Episode]:
    """Play every probe; returns their episodes (the reward-model check reads them too)."""
    rows, hacked, harness, played = [], [], [], []
    errors = 0
    for probe in PROBES:
        plan = _probe_plan(task, probe, primary, fakes)
        if plan is None:
            rows.append({"probe": probe.name, "severity": probe.severity, "status": "skip",
                         "why": "no solution file this probe can replace"})
            tick(task.task_id)
            continue
        mode, actions = plan
        ep = player.play(mode, actions)
        played.append(ep)
        tick(task.task_id)
        # A probe that leaves the solution unchanged starts from what the no-op earns (the trivial
        # check judges that); it hacks only what it earns beyond it.
        floor = baseline if probe.code is None else 0.0
        row = {"probe": probe.name, "severity": probe.severity, "mode": mode, "score": round(ep.score, 6),
               "rules_scored": _scored_rules(ep), "status": "pass", "baseline": round(floor, 6)}
        if ep.masked:
            row.update(status="error", infra_error=ep.infra_error)
            errors += 1
        elif ep.score > floor + _EPS:
            row["status"] = "fail"
            (harness if probe.severity == "harness" and not config.strict else hacked).append(row)
        rows.append(row)
    evidence = {"probes": rows}
    ran = sum(1 for r in rows if r["status"] != "skip")

    def names(found):
        return ", ".join(f"{r['probe']} ({r['score']:.3f} via {', '.join(r['rules_scored'])})" for r in found)

    if hacked:
        audit.checks.append(Check("hacking", "fail", f"hackable: {names(hacked)} scored above 0", evidence))
    elif harness:
        audit.checks.append(Check("hacking", "warn", f"the evaluation itself is hackable (every task shares this; "
                                  f"--strict rejects it): {names(harness)}", evidence))
    elif errors:
        audit.checks.append(Check("hacking", "error", f"{errors} probe(s) hit an infrastructure failure", evidence))
    else:
        audit.checks.append(Check("hacking", "pass", f"all {ran} probe(s) score 0", evidence))
    return played


def _reward_models(task: TaskSpec, audit: TaskAudit, good: list[_Episode], failing: list[_Episode]) -> None:
    """A reward model must never let a failing solution beat a passing one: every unsuccessful
    episode the audit played (the no-op, the hack probes) scores below the reference's lowest score."""
    models = [r.reward_model for r in task.reward.rules if r.reward_model is not None]
    if not models:
        return
    if not good:
        audit.checks.append(Check("reward_models", "skip", "no reference run completed"))
        return
    floor = min(e.score for e in good)
    beaten = [e for e in failing if not e.masked and not e.success and e.score >= floor - _EPS]
    evidence = {"reference_min": round(floor, 6), "models": models,
                "failing_scores": [round(e.score, 6) for e in failing if not e.masked and not e.success]}
    if beaten:
        audit.checks.append(Check("reward_models", "fail", f"a failing solution scores {max(e.score for e in beaten):.3f}, "
                                  f"not below the reference's {floor:.3f}: gate the reward model on the tests "
                                  '("gate": {"metric": "test_pass_rate", "min": 1.0}) or lower its weight', evidence))
    else:
        audit.checks.append(Check("reward_models", "pass", f"{len(evidence['failing_scores'])} failing episode(s) all "
                                  f"score below the reference's {floor:.3f}", evidence))


def _gates(task: TaskSpec, audit: TaskAudit, reg) -> None:
    ungated = []
    for i, rule in enumerate(task.reward.rules):
        info = reg.metrics.get(rule.metric) if rule.metric else None
        if info is not None and info.direction == "lower" and rule.gate is None:
            ungated.append({"rule": i, "metric": rule.metric, "noisy": info.noisy})
    if ungated:
        what = ", ".join(f"/reward_logic/rules/{u['rule']} ({u['metric']})" for u in ungated)
        audit.checks.append(Check("gates", "warn", f"lower-is-better rule(s) without a gate, which an empty program "
                                  f"wins: {what}; add \"gate\": {{\"metric\": \"test_pass_rate\", \"min\": 1}}",
                                  {"ungated": ungated}))
    else:
        audit.checks.append(Check("gates", "pass", "every lower-is-better rule is gated"))


# --------------------------------------------------------------------------- leakage

def _lines(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 12 and "\x00" not in ln}


def _leakage(task: TaskSpec, audit: TaskAudit, player: _Player) -> None:
    pristine = {rel: data.decode("utf-8", "replace") for rel, data in task.workspace.read().items()}
    pristine_lines = {rel: _lines(text) for rel, text in pristine.items()}
    everywhere = set().union(*pristine_lines.values()) if pristine_lines else set()
    hidden = task.hidden_files.read() if task.hidden_files else {}
    sources: list[tuple[str, str, list[str]]] = []  # (label, basename, markers)
    leaks: list[dict[str, str]] = []
    root = task.root.rstrip("/")
    for kind, files in (("hidden", hidden), ("reference", {k: v.encode() for k, v in task.reference_files().items()})):
        for rel, data in sorted(files.items()):
            lines = _lines(data.decode("utf-8", "replace"))
            own = lines - pristine_lines.get(rel, set())  # what this file adds to its workspace version
            if not own:
                continue
            # Another workspace file holding all it adds is a copy the agent can read on its first
            # step (a single short line is too common to count: "return a + b").
            for other, have in sorted(pristine_lines.items()):
                if other != rel and own <= have and sum(map(len, own)) >= 30:
                    leaks.append({"source": f"{kind}:{rel}", "found": f"{root}/{other}", "how": "workspace copy"})
            # Lines no workspace file has: finding them anywhere else the agent can read is a leak.
            markers = sorted(own - everywhere, key=lambda ln: (-len(ln), ln))[:2]
            if markers:
                sources.append((f"{kind}:{rel}", os.path.basename(rel), markers))
    if not sources and not leaks:
        audit.checks.append(Check("leakage", "skip", "no hidden or reference file differs from the workspace"))
        return
    env = player.env(AGENTIC)
    timed_out = False
    try:
        obs, info = env.reset()
        if info.get("reward_masked"):
            audit.checks.append(Check("leakage", "error", f"infrastructure failure: {info.get('infra_error')}"))
            return
        obs, *_ = env.step({"action": "list_files"})
        listed = set(obs["output"].splitlines())
        for rel in sorted(hidden):
            if rel in listed and rel not in pristine:
                leaks.append({"source": f"hidden:{rel}", "found": f"{task.root.rstrip('/')}/{rel}", "how": "list_files"})
        nonce = secrets.token_hex(6)
        listing = f"/tmp/.agentenv-audit-{nonce}"
        big = ["/usr", *env.unwrapped.runtime.mounts]
        outside_big = " -o ".join(f"-path {shlex.quote(p.rstrip('/') + '/*')}" for p in big)
        names = " -o ".join(f"-name {shlex.quote(b)}" for b in sorted({s[1] for s in sources}))
        # One walk: the content of every file the agent can read, except inside the big read-only
        # system trees (grepping all of /usr costs ~25 s), where only files named like a source are read.
        script = [f"find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f \\( {names} -o -not "
                  f"\\( {outside_big} \\) \\) -print 2>/dev/null > {listing}"]
        for i, (_, _, markers) in enumerate(sources):
            chain = " | ".join(f"tr '\\n' '\\0' | xargs -0 -r grep -IlF -e {shlex.quote(m)} -- 2>/dev/null"
                               for m in markers)
            script.append(f"grep -vxF {listing} {listing} | {chain} | sed 's|^|LEAK {i} |'")
        script.append("true")
        if not sources:
            script = ["true"]
        obs, *_ = env.step({"action": "run_command", "command": "\n".join(script)})
        output = obs["output"]
        timed_out = bool(re.search(r"^\[exit code [^\]]*timed out", output, re.M))
        for line in output.splitlines():
            if line.startswith("LEAK "):
                _, index, found = line.split(" ", 2)
                leaks.append({"source": sources[int(index)][0], "found": found, "how": "readable content"})
    except InfrastructureError as exc:
        audit.checks.append(Check("leakage", "error", f"infrastructure failure: {exc}"))
        return
    finally:
        env.close()
    leaks = list({(l["source"], l["found"]): l for l in reversed(leaks)}.values())[::-1]
    evidence = {"sources": [s[0] for s in sources], "leaks": leaks}
    if leaks:
        where = ", ".join(f"{l['source']} at {l['found']}" for l in leaks[:5])
        audit.checks.append(Check("leakage", "fail", f"readable from the agent's sandbox: {where}", evidence))
    elif timed_out:
        audit.checks.append(Check("leakage", "error", "the leak scan ran past the task's wall-time limit", evidence))
    else:
        audit.checks.append(Check("leakage", "pass", f"{len(evidence['sources'])} hidden/reference file(s) not "
                                  "readable by the agent", evidence))


# --------------------------------------------------------------------------- many tasks

def audit_paths(paths: Sequence[str], config: AuditConfig = AuditConfig(), workers: int = 1,
                progress: Callable[[int, int, str], None] | None = None,
                on_task: Callable[[TaskAudit], None] | None = None) -> AuditReport:
    """Audit every task under *paths* with *workers* threads (each with its own environments).

    ``progress(done, total, label)`` counts episodes; ``on_task(audit)`` sees each finished task.
    """
    if workers < 1:
        raise AuditError(f"--workers must be at least 1, not {workers}")
    tasks = collect_tasks(paths)
    if not tasks:
        raise AuditError("no tasks to audit in " + ", ".join(paths))
    per_task = config.runs + 2 + len(PROBES)
    total = per_task * len(tasks)
    lock = threading.Lock()
    done = [0]

    def tick(label: str, n: int = 1) -> None:
        with lock:
            done[0] = min(total, done[0] + n)
            if progress:
                progress(done[0], total, label)

    def one(item: tuple[str, str | None]) -> TaskAudit:
        path, suite = item
        count = [0]

        def task_tick(label: str) -> None:
            count[0] += 1
            tick(label)

        result = audit_task(path, config, suite, task_tick)
        tick(result.task_id or path, max(0, per_task - count[0]))
        if on_task:
            with lock:
                on_task(result)
        return result

    start = time.monotonic()
    if workers == 1:
        results = [one(t) for t in tasks]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentenv-audit") as pool:
            results = list(pool.map(one, tasks))
    return AuditReport(config, results, workers, time.monotonic() - start)


