"""The agentenv plugin: code-quality metrics of the agent's changed files."""

from __future__ import annotations

from typing import Any, Mapping

import agentenv

from .tools import RUFF_RULES, CachedAnalysis

METRICS = (
    agentenv.MetricInfo("lint_findings", "lower", f"ruff findings ({','.join(RUFF_RULES)}; configuration files and "
                        "noqa comments ignored) in the changed Python files; needs a threshold"),
    agentenv.MetricInfo("cyclomatic_complexity", "lower", "the largest cyclomatic complexity (radon) of a function, "
                        "method or module body in the changed Python files (1 + its decision keywords for a file radon "
                        "cannot measure); needs a threshold"),
    agentenv.MetricInfo("maintainability_index", "higher", "the lowest maintainability index (radon, 0-100, "
                        "without the comment term) of the changed Python files; 0 for a file that is not analysed",
                        bound=100.0),
    agentenv.MetricInfo("shellcheck_findings", "lower", "shellcheck findings (directives and rc files ignored) in "
                        "the changed shell scripts; needs a threshold"),
)


class QualityMetrics(agentenv.MetricProvider):
    """Lint, complexity and maintainability of the code the agent wrote (``RunContext.files``).

    Computed on the host from the files' bytes (no tool executes them), once per distinct set of
    files. A metric is left out when no file of its kind changed, so a rule on it scores 0 for an
    agent that wrote nothing. On demand: measured where a task's reward reads one of them, or where
    the environment was made with ``metrics="all"`` or a list naming one (a ruff process and radon
    cost a single-shot HumanEval episode about a fifth of its CPU)."""

    metrics = METRICS
    on_demand = True

    def __init__(self) -> None:
        self._analyse = CachedAnalysis()

    def prepare(self, files: Mapping[str, bytes]) -> None:
        if files:
            self._analyse.start(files)  # the tools run while the scored command does

    def measure(self, run: agentenv.RunContext) -> Mapping[str, Any]:
        files = getattr(run, "files", None) or {}
        if not files:
            return {}
        return self._analyse(files).metrics()


@agentenv.hookimpl
def agentenv_add_metrics(registry) -> None:
    registry.add_metrics(QualityMetrics())
