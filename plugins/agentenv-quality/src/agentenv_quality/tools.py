"""Code-quality measurements of a set of files, made by the tools people already trust.

ruff counts lint findings, radon measures cyclomatic complexity and the maintainability index,
shellcheck counts findings in shell scripts. The files are the agent's, so they are untrusted: the
agent also decides every comment and configuration file it writes, and a policy trained against a
metric would soon learn to write ``# noqa`` or a ``ruff.toml`` that turns every rule off. So:

* ruff runs ``--isolated`` (no configuration file is read) with ``--ignore-noqa``, on a copy of the
  files in a private temporary directory, with one fixed rule set (:data:`RUFF_RULES`);
* shellcheck runs with ``--norc`` and ``# shellcheck ...`` directive lines blanked out first;
* radon's maintainability index is computed without its comment term (radon adds up to 50 points
  for comment lines, and comments are what an agent can add for free);
* a file past :data:`MAX_FILE_BYTES`, or one that does not parse, is never silently skipped: it
  counts as a finding (``AGENTENV-TOO-LARGE``) and as a maintainability index of 0.

Aggregates are the worst file or block (the largest complexity, the lowest index) and total
counts, never means: adding a tidy, useless file cannot dilute a bad one.
"""

from __future__ import annotations

import collections
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import agentenv

log = logging.getLogger("agentenv.quality")

#: the ruff rule families counted (pycodestyle errors and warnings, pyflakes, bugbear,
#: comprehensions, simplify, return, pie, pep8-naming); fixed, so the metric means the same everywhere
RUFF_RULES = ("E", "W", "F", "B", "C4", "SIM", "RET", "PIE", "N")
RUFF_LINE_LENGTH = 100
MAX_FILES = 200
MAX_FILE_BYTES = 1 << 20
TOOL_TIMEOUT_S = 60.0
TOO_LARGE = "AGENTENV-TOO-LARGE"
UNANALYSABLE = "AGENTENV-UNANALYSABLE"
_SHEBANG_SHELL = re.compile(rb"^#!\s*\S*?(?:/env\s+)?\b(?:sh|bash|dash|ksh|busybox\s+sh)\b")
_SHELLCHECK_DIRECTIVE = re.compile(rb"^([ \t]*)#[ \t]*shellcheck\b[^\n]*", re.MULTILINE)


class QualityToolError(agentenv.AgentEnvError):
    """A quality tool could not run at all (missing or crashing binary): the machinery's failure."""


@dataclass(frozen=True)
class QualityReport:
    """What the tools found in one set of files. ``None``: no file of that kind was there."""

    python_files: int = 0
    shell_files: int = 0
    lint_findings: int | None = None
    lint_rules: Mapping[str, int] = field(default_factory=dict)
    cyclomatic_complexity: int | None = None
    maintainability_index: float | None = None
    shellcheck_findings: int | None = None
    shellcheck_rules: Mapping[str, int] = field(default_factory=dict)

    def metrics(self) -> dict[str, Any]:
        """The metric values that apply (a rule on a metric that does not apply scores 0)."""
        values: dict[str, Any] = {}
        if self.lint_findings is not None:
            values.update(lint_findings=self.lint_findings, lint_rules=dict(self.lint_rules))
        if self.cyclomatic_complexity is not None:
            values["cyclomatic_complexity"] = self.cyclomatic_complexity
        if self.maintainability_index is not None:
            values["maintainability_index"] = self.maintainability_index
        if self.shellcheck_findings is not None:
            values.update(shellcheck_findings=self.shellcheck_findings, shellcheck_rules=dict(self.shellcheck_rules))
        return values


def is_python(path: str) -> bool:
    return path.endswith(".py")


def is_shell(path: str, data: bytes) -> bool:
    return path.endswith((".sh", ".bash")) or bool(_SHEBANG_SHELL.match(data[:200]))


def analyse(files: Mapping[str, bytes]) -> QualityReport:
    """Measure *files* (relative path -> content): Python files with ruff and radon, shell scripts
    with shellcheck (left out, with a warning, where shellcheck is not installed)."""
    chosen = sorted(files.items())[:MAX_FILES]
    python = {p: d for p, d in chosen if is_python(p)}
    shell = {p: d for p, d in chosen if not is_python(p) and is_shell(p, d)}
    report: dict[str, Any] = {"python_files": len(python), "shell_files": len(shell)}
    if python:
        findings = lint_python(python)
        rules = collections.Counter(code for codes in findings.values() for code in codes)
        indices, complexities = [], []
        for data in python.values():
            code = _text(data)
            if code is None:
                indices.append(0.0)
                continue
            indices.append(maintainability(code))
            cc = complexity(code)
            if cc is not None:
                complexities.append(cc)
        report.update(lint_findings=sum(rules.values()), lint_rules=dict(sorted(rules.items())),
                      maintainability_index=min(indices), cyclomatic_complexity=max(complexities, default=None))
    if shell:
        checked = run_shellcheck(shell)
        if checked is not None:
            rules = collections.Counter(code for codes in checked.values() for code in codes)
            report.update(shellcheck_findings=sum(rules.values()), shellcheck_rules=dict(sorted(rules.items())))
    return QualityReport(**report)


def _text(data: bytes) -> str | None:
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# --------------------------------------------------------------------------- ruff

def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError as exc:
        raise QualityToolError("ruff is not installed: pip install ruff==0.17.5") from exc
    return find_ruff_bin()


def lint_python(sources: Mapping[str, bytes]) -> dict[str, list[str]]:
    """Ruff's findings per file (rule codes, ``invalid-syntax`` for a file that does not parse), from
    one ruff run over copies of the files; a file past the size bound is one ``AGENTENV-TOO-LARGE``."""
    argv = [ruff_binary(), "check", "--isolated", "--ignore-noqa", "--no-cache", "--quiet", "--exit-zero",
            "--output-format", "json", "--line-length", str(RUFF_LINE_LENGTH), "--select", ",".join(RUFF_RULES), "--"]

    def parse(out: str) -> list[tuple[str, str]]:
        try:
            return [(d.get("filename", ""), str(d.get("code") or "invalid-syntax")) for d in json.loads(out or "[]")]
        except (ValueError, AttributeError) as exc:
            raise QualityToolError(f"ruff printed something that is not JSON: {out[:200]!r}") from exc

    return _findings("ruff", argv, sources, ".py", (0,), parse)


def _findings(tool: str, argv: list[str], sources: Mapping[str, bytes], suffix: str, ok_codes: tuple[int, ...],
              parse: Callable[[str], list[tuple[str, str]]]) -> dict[str, list[str]]:
    """Run *tool* once over copies of *sources*; map its findings back to the original paths.

    The files are the agent's, and a crafted one can crash a tool (ruff overflows its stack on a
    deep enough expression). That is the agent's doing, so it must not mask the episode: when the
    batch fails, each file runs alone, and a file the tool cannot get through counts as one
    ``AGENTENV-UNANALYSABLE`` finding. Only a tool that fails on an empty file is the machinery's
    failure (:class:`QualityToolError`)."""
    found = {path: [TOO_LARGE] if len(data) > MAX_FILE_BYTES else [] for path, data in sources.items()}
    small = {p: d for p, d in sources.items() if len(d) <= MAX_FILE_BYTES}
    if not small:
        return found

    deadline = time.monotonic() + TOOL_TIMEOUT_S

    def run(batch: Mapping[str, bytes]) -> list[tuple[str, str]] | None:
        with tempfile.TemporaryDirectory(prefix="agentenv-quality-") as tmp:
            names = _lay_out(tmp, batch, suffix)
            out = _run([*argv, *sorted(names)], tmp, tool, ok_codes, max(1.0, deadline - time.monotonic()))
            if out is None:
                return None
            return [(names[n], code) for f, code in parse(out)
                    if (n := os.path.relpath(os.path.join(tmp, f), tmp)) in names]

    results = run(small)
    if results is None:
        if run({"empty" + suffix: b""}) is None:
            raise QualityToolError(f"{tool} fails even on an empty file: reinstall it")
        results = []
        for path, data in small.items():  # within the same deadline: a file that hangs the tool costs it once
            alone = run({path: data}) if time.monotonic() < deadline else None
            results.extend(alone if alone is not None else [(path, UNANALYSABLE)])
    for path, code in results:
        found[path].append(code)
    return found


def _lay_out(tmp: str, sources: Mapping[str, bytes], suffix: str) -> dict[str, str]:
    """Write each file as ``<n>/<basename>`` under *tmp* (never the agent's own path: no traversal,
    no links); return ``{relative name under tmp: original path}``."""
    names: dict[str, str] = {}
    for i, (path, data) in enumerate(sorted(sources.items())):
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path))[-100:].lstrip(".") or "file"
        if suffix == ".py" and not base.endswith(suffix):  # ruff checks only what it takes for Python
            base += suffix
        rel = os.path.join(str(i), base)
        os.mkdir(os.path.join(tmp, str(i)))
        with open(os.path.join(tmp, rel), "wb") as f:
            f.write(data)
        names[rel] = path
    return names


def _run(argv: list[str], cwd: str, tool: str, ok_codes: tuple[int, ...], timeout: float) -> str | None:
    """The tool's standard output; None when it failed on these files (crashed, timed out)."""
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              # one thread: an episode's few files do not repay a pool's start (5.7 -> 4.2 ms)
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd, "LC_ALL": "C.UTF-8",
                                   "RAYON_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        log.warning("%s ran past %.0f s", tool, timeout)
        return None
    except OSError as exc:
        raise QualityToolError(f"{tool} could not be started: {exc}") from exc
    if proc.returncode not in ok_codes:
        log.info("%s exited %s: %s", tool, proc.returncode, proc.stderr.decode(errors="replace")[-300:])
        return None
    return proc.stdout.decode("utf-8", "replace")


# --------------------------------------------------------------------------- radon

def complexity(code: str) -> int | None:
    """The largest cyclomatic complexity of a function, method or the module body (None: does not parse)."""
    from radon.visitors import ComplexityVisitor

    try:
        visitor = ComplexityVisitor.from_code(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    blocks = [visitor.complexity]
    for fn in visitor.functions:
        blocks.append(fn.complexity)
    for cls in visitor.classes:
        blocks.extend(m.complexity for m in cls.methods)
    return int(max(blocks))


def maintainability(code: str) -> float:
    """Radon's maintainability index (0-100) without the comment term; 0 for code that does not parse."""
    from radon.metrics import mi_compute, mi_parameters

    try:
        volume, cc, lloc, _comments = mi_parameters(code, count_multi=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, IndexError):
        return 0.0
    return round(float(mi_compute(volume, cc, lloc, 0)), 2)


# --------------------------------------------------------------------------- shellcheck

_warned_shellcheck = False


def run_shellcheck(sources: Mapping[str, bytes]) -> dict[str, list[str]] | None:
    """shellcheck's findings per script (``SC2086``...), directives blanked; None where shellcheck is
    not installed (warned once: ``apt-get install shellcheck``)."""
    global _warned_shellcheck
    binary = shutil.which("shellcheck")
    if binary is None:
        if not _warned_shellcheck:
            log.warning("shellcheck is not installed, so shellcheck_findings is left out "
                        "(install it: apt-get install shellcheck)")
            _warned_shellcheck = True
        return None
    def parse(out: str) -> list[tuple[str, str]]:
        try:
            return [(c.get("file", ""), f"SC{c.get('code')}") for c in json.loads(out or "{}").get("comments", [])]
        except (ValueError, AttributeError) as exc:
            raise QualityToolError(f"shellcheck printed something that is not JSON: {out[:200]!r}") from exc

    blanked = {p: _SHELLCHECK_DIRECTIVE.sub(rb"\1#", d) if len(d) <= MAX_FILE_BYTES else d for p, d in sources.items()}
    return _findings("shellcheck", [binary, "--norc", "--format=json1", "--"], blanked, ".sh", (0, 1), parse)


# --------------------------------------------------------------------------- cache

class CachedAnalysis:
    """:func:`analyse` with a small LRU cache keyed by the files' content, so the scored runs of one
    evaluation (and repeated evaluations of the same solution) measure once."""

    def __init__(self, size: int = 256):
        self._size = size
        self._cache: collections.OrderedDict[bytes, QualityReport] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, files: Mapping[str, bytes]) -> QualityReport:
        digest = hashlib.sha256()
        for path, data in sorted(files.items()):
            digest.update(hashlib.sha256(path.encode("utf-8", "surrogateescape")).digest())
            digest.update(hashlib.sha256(data).digest())
        key = digest.digest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        report = analyse(files)
        with self._lock:
            self._cache[key] = report
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return report
