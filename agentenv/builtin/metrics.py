"""Built-in metrics: test outcomes (from whatever report format read the run) and execution measurements.

Test metrics come from the :class:`agentenv.TestReport` a report format read (``reports.py``);
nothing the program prints is trusted. A report that is missing, cut short or tampered with
scores a pass rate of 0, never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import agentenv
from agentenv import MetricInfo, MetricProvider, RunContext

from .reports import parse_error


class TestMetrics(MetricProvider):
    """Counts of a run's test outcomes, and the score of its report."""

    __test__ = False  # not a pytest test class, despite the name

    metrics = (
        MetricInfo("test_pass_rate", "higher", "passed / collected tests (skips and errors count as not passed)", bound=1.0),
        MetricInfo("tests_passed", "higher", "number of passing tests"),
        MetricInfo("tests_failed", "lower", "number of failing tests"),
        MetricInfo("tests_errors", "lower", "tests with errors, collection errors included"),
        MetricInfo("tests_total", "higher", "number of tests in the report"),
        MetricInfo("report_score", "higher", "the score the run's report gives: a reward file's number, or the "
                                             "pass rate of a test report (0 when untrusted)", bound=1.0),
    )

    def measure(self, run: RunContext) -> dict[str, Any]:
        report = run.report
        if report is None:
            return {}
        values = self.counts(report.outcomes)
        values.update(report=report.format if report.trusted else report.status, error=report.error,
                      integrity=[dict(f) for f in report.integrity])
        score = report.score if report.score is not None else values["test_pass_rate"]
        values["report_score"] = score if report.trusted else 0.0
        if not report.trusted:
            values["test_pass_rate"] = 0.0
            if not report.outcomes:
                values["tests_errors"] = max(1, values["tests_errors"])
        if not report.outcomes and report.score is not None:  # a bare score: no test counts to show
            for key in ("test_pass_rate", "tests_passed", "tests_failed", "tests_errors", "tests_total", "test_outcomes"):
                values.pop(key)
        return values

    @staticmethod
    def counts(outcomes: Mapping[str, str]) -> dict[str, Any]:
        passed = sum(1 for o in outcomes.values() if o == "passed")
        total = len(outcomes)
        return {"test_pass_rate": passed / total if total else 0.0, "tests_passed": passed,
                "tests_failed": sum(1 for o in outcomes.values() if o == "failed"),
                "tests_errors": sum(1 for o in outcomes.values() if o == "error"),
                "tests_total": total, "test_outcomes": dict(outcomes)}


class ExecMetrics(MetricProvider):
    metrics = (
        MetricInfo("exit_code", "lower", "the command's exit status (-N: killed by signal N)"),
        MetricInfo("command_succeeded", "higher", "1 when the command exited 0 in time, else 0", bound=1.0),
        MetricInfo("execution_time_ms", "lower", "wall time of the command", noisy=True),
        MetricInfo("cpu_time_ms", "lower", "user + system CPU time of the command", noisy=True),
        MetricInfo("peak_memory_mb", "lower", "peak memory of the command: its largest process's, or how far the sandbox's memory cgroup rose "
                   "while it ran where that is more and the backend reads it (all its processes, files in tmpfs)", noisy=True),
        MetricInfo("timed_out", "lower", "1 when the wall-time limit killed the command", bound=1.0),
        MetricInfo("oom_killed", "lower", "1 when the memory limit killed the command", bound=1.0),
        MetricInfo("output_bytes", "lower", "bytes printed on stdout and stderr"),
    )

    def measure(self, run: RunContext) -> dict[str, Any]:
        r = run.result
        values: dict[str, Any] = {
            "exit_code": r.exit_code, "command_succeeded": 1.0 if r.ok else 0.0,
            "execution_time_ms": r.wall_ms, "cpu_time_ms": r.cpu_ms, "peak_memory_mb": r.peak_memory_mb,
            "timed_out": 1.0 if r.timed_out else 0.0, "oom_killed": 1.0 if r.oom_killed else 0.0,
            "output_bytes": len(r.stdout.encode()) + len(r.stderr.encode()),
        }
        if run.report is None and not r.ok:
            values["error"] = parse_error(r.stderr) or {"type": "ExitStatus", "message": f"exit code {r.exit_code}"}
        return values


@agentenv.hookimpl
def agentenv_add_metrics(registry) -> None:
    registry.add_metrics(TestMetrics())
    registry.add_metrics(ExecMetrics())
