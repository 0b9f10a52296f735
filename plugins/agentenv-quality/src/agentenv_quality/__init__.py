"""agentenv-quality: code-quality metrics (ruff, radon, shellcheck) that reward rules can name."""

from .plugin import METRICS, QualityMetrics
from .tools import (MAX_FILE_BYTES, MAX_FILES, RUFF_LINE_LENGTH, RUFF_RULES, TOO_LARGE, TOO_MANY_FILES,
                    UNANALYSABLE, QualityReport, QualityToolError, analyse, complexity, lint_python, maintainability,
                    run_shellcheck)

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "METRICS", "RUFF_LINE_LENGTH", "RUFF_RULES", "TOO_LARGE", "TOO_MANY_FILES",
           "UNANALYSABLE", "QualityMetrics", "QualityReport", "QualityToolError", "analyse", "complexity",
           "lint_python", "maintainability", "run_shellcheck"]
