"""What an audit found: its configuration, each check, each task, the whole report."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import agentenv
from agentenv import AuditError  # noqa: F401  (re-exported: the audit's own error)

AUDIT_SCHEMA = "agentenv.audit/1"
STATUSES = ("pass", "warn", "fail", "error", "skip")
VERDICTS = ("ok", "warn", "reject")
CHECKS = ("schema", "reference", "stability", "trivial", "hacking", "gates", "reward_models", "determinism", "budget",
          "duration", "leakage")
_EPS = 1e-9
#: metrics whose values come from the test report: a quarantined (flaky) test moves them
_TEST_METRICS = ("test_pass_rate", "tests_passed", "tests_failed", "tests_errors", "tests_total")


@dataclass(frozen=True)
class AuditConfig:
    runs: int = 5  # identical runs of the reference
    quarantine: bool = False  # flaky tests: quarantine (warn) instead of reject
    strict: bool = False  # harness probes reject too
    tolerance: float = 0.1  # allowed spread of a rule score on a noisy (timing) metric
    margin: float = 2.0  # a limit must be at least margin * p95 of the reference
    duration_factor: float = 3.0  # expected_duration_s may be off by this factor
    backend: str = "auto"

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise AuditError(f"--runs must be at least 1, not {self.runs}")
        if self.margin < 1 or self.duration_factor < 1:
            raise AuditError("--margin and the duration factor must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "quarantine": self.quarantine, "strict": self.strict,
                "tolerance": self.tolerance, "margin": self.margin, "duration_factor": self.duration_factor,
                "backend": self.backend}


@dataclass
class Check:
    name: str
    status: str
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "message": self.message, "evidence": agentenv.jsonable(self.evidence)}


@dataclass
class TaskAudit:
    path: str
    task_id: str | None
    suite: str | None
    checks: list[Check] = field(default_factory=list)
    stability: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)  # {"test", "command"}
    measured: dict[str, Any] = field(default_factory=dict)
    suggested_expected_duration_s: float | None = None
    seconds: float = 0.0

    @property
    def verdict(self) -> str:
        statuses = {c.status for c in self.checks}
        if "fail" in statuses:
            return "reject"
        if statuses & {"warn", "error"}:
            return "warn"
        return "ok"

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def reasons(self) -> list[str]:
        """One line per check that did not pass, failures first."""
        order = {"fail": 0, "error": 1, "warn": 2}
        bad = sorted((c for c in self.checks if c.status in order), key=lambda c: order[c.status])
        return [f"{c.name} {c.status}: {c.message}" for c in bad]

    @property
    def infra_errors(self) -> int:
        return sum(1 for c in self.checks if c.status == "error")

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "path": self.path, "suite": self.suite, "verdict": self.verdict,
                "reasons": self.reasons, "seconds": round(self.seconds, 3),
                "checks": [c.to_json() for c in self.checks], "stability": agentenv.jsonable(self.stability),
                "quarantined": list(self.quarantined), "measured": agentenv.jsonable(self.measured),
                "suggested_expected_duration_s": self.suggested_expected_duration_s}


@dataclass
class AuditReport:
    config: AuditConfig
    tasks: list[TaskAudit]
    workers: int = 1
    seconds: float = 0.0
    created: float = field(default_factory=time.time)

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for t in self.tasks:
            out[t.verdict] += 1
        return out

    @property
    def exit_status(self) -> int:
        """1 when a task is rejected; 3 when none is but some checks hit an infrastructure failure."""
        if any(t.verdict == "reject" for t in self.tasks):
            return 1
        return 3 if any(t.infra_errors for t in self.tasks) else 0

    def to_json(self) -> dict[str, Any]:
        counts = self.counts()
        return {"schema": AUDIT_SCHEMA, "agentenv_version": agentenv.__version__,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created)),
                "config": {**self.config.to_json(), "workers": self.workers},
                "summary": {"tasks": len(self.tasks), **counts,
                            "infra_errors": sum(t.infra_errors for t in self.tasks),
                            "seconds": round(self.seconds, 3)},
                "tasks": [t.to_json() for t in self.tasks]}


