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
* every file is measured as the text Python reads (PEP 263: a ``# coding: utf-7`` line or a BOM
  cannot show the tools other code than the interpreter runs);
* no file is ever silently skipped or scored better than an honest analysis could score it. A
  file a tool did not get through (past :data:`MAX_FILE_BYTES`, past the first :data:`MAX_FILES`
  files, crashing the tool, not parsing) counts as if every non-blank line had a finding
  (:func:`unanalysed_findings`); one radon did not get through has a maintainability index of 0
  and the complexity bound :func:`complexity_bound` (1 + every decision keyword in the file), which
  is never below radon's largest block. The bounds count lines and words, not what is in them, so
  no comment or string can lower them.

Aggregates are the worst file or block (the largest complexity, the lowest index) and total
counts, never means: adding a tidy, useless file cannot dilute a bad one.
"""

from __future__ import annotations

import ast
import collections
import concurrent.futures
import functools
import hashlib
import io
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import tokenize
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
TOO_MANY_FILES = "AGENTENV-TOO-MANY-FILES"
#: the words of every construct radon counts in a block (if, elif, else, for, while, and, or, except,
#: case, assert) and with, which other versions count. A keyword may follow a number with no space
#: (``1if``, ``0x1for``, ``1jor``), so only a letter that cannot end a number rules a match out.
_DECISION = re.compile(r"(?<![G-IK-Zg-ik-z_])(?:if|elif|else|for|while|and|or|except|case|assert|with)(?![0-9A-Za-z_])")
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
    with shellcheck (left out, with a warning, where shellcheck is not installed).

    The tools see at most :data:`MAX_FILES` files (a bound on the work), the largest first: files the
    agent adds (empty ones, say) can never push its real code out of the analysed set. Every file
    past the bound still counts, as not analysed: one ``AGENTENV-TOO-MANY-FILES`` finding per
    non-blank line (at least one), the complexity bound and a maintainability index of 0. Being
    the smallest, each scores no better than it would if analysed."""
    measurable = sorted(((p, d) for p, d in files.items() if is_python(p) or is_shell(p, d)),
                        key=lambda item: (-len(item[1]), item[0]))
    unread = {p: [TOO_MANY_FILES] * unanalysed_findings(d) for p, d in measurable[MAX_FILES:]}
    texts = {p: _text(d) for p, d in measurable[:MAX_FILES] if is_python(p)}
    # a file Python cannot read as text (an unknown or refused encoding) cannot run either: what ruff
    # would make of its bytes says nothing, and a clean reading of them scored it 0 findings
    unread.update({p: [UNANALYSABLE] * unanalysed_findings(d) for p, d in measurable[:MAX_FILES]
                 if is_python(p) and texts[p] is None and len(d) <= MAX_FILE_BYTES})
    # ruff reads UTF-8 only: it gets the text Python reads, re-encoded
    python = {p: d if texts.get(p) is None else texts[p].encode() for p, d in measurable if is_python(p)}
    shell = {p: d for p, d in measurable if not is_python(p)}

    def counted(tool: Callable[[Mapping[str, bytes]], dict[str, list[str]] | None],
                sources: Mapping[str, bytes]) -> dict[str, list[str]] | None:
        """*tool*'s findings in the files it reads, and those it is not given."""
        found = tool({p: d for p, d in sources.items() if p not in unread})
        return None if found is None else {**found, **{p: unread[p] for p in sources if p in unread}}

    report: dict[str, Any] = {"python_files": len(python), "shell_files": len(shell)}
    if python:
        findings = counted(lint_python, python)
        rules = collections.Counter(code for codes in findings.values() for code in codes)
        measures = [(0.0, complexity_bound(_source(data))) if texts.get(path) is None else radon_measures(texts[path])
                    for path, data in python.items()]
        report.update(lint_findings=sum(rules.values()), lint_rules=dict(sorted(rules.items())),
                      maintainability_index=min(index for index, _ in measures),
                      cyclomatic_complexity=max(cc for _, cc in measures))
    if shell:
        checked = counted(run_shellcheck, shell)
        if checked is not None:
            rules = collections.Counter(code for codes in checked.values() for code in codes)
            report.update(shellcheck_findings=sum(rules.values()), shellcheck_rules=dict(sorted(rules.items())))
    return QualityReport(**report)


def _text(data: bytes) -> str | None:
    """The Python source text of *data* (its PEP 263 encoding); None past the size bound or undecodable.

    A text that is not Unicode Python can read (``# coding: utf-7`` with ``+2AA-``, a lone surrogate)
    is undecodable too: Python refuses to compile it, and its re-encoding for ruff raised, which
    masked the episode as a failing metric plugin (red team, stop 37)."""
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        text = _source(data, "strict")
        text.encode("utf-8")
        return text
    except (SyntaxError, LookupError, UnicodeError):
        return None


def _source(data: bytes, errors: str = "replace") -> str:
    """*data* decoded as Python decodes a source file (a BOM or a ``# coding:`` line, else UTF-8);
    unless *errors* is strict, Latin-1 where Python would refuse the declared encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding, errors)
    except (SyntaxError, LookupError):
        if errors == "strict":
            raise
        return data.decode("latin-1")


def unanalysed_findings(data: bytes) -> int:
    """The findings a file counts as where a tool did not get through it: as if every non-blank line
    had one, and at least one. Honest code rarely has more findings than lines (and clean code none),
    so failing a tool on purpose does not pay."""
    return max(1, sum(1 for line in data.splitlines() if line.strip()))


# --------------------------------------------------------------------------- ruff

@functools.lru_cache(maxsize=None)
def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError as exc:
        raise QualityToolError("ruff is not installed: pip install ruff==0.17.5") from exc
    return find_ruff_bin()


def lint_python(sources: Mapping[str, bytes]) -> dict[str, list[str]]:
    """Ruff's findings per file (rule codes, ``invalid-syntax`` for a file that does not parse), from
    one ruff run over copies of the files. A file ruff did not get through counts as
    :func:`unanalysed_findings`: one past the size bound as ``AGENTENV-TOO-LARGE``, one that
    crashed it as ``AGENTENV-UNANALYSABLE``, and one that does not parse (where ruff's findings
    stop, or another Python runs it) is made up to that count with ``AGENTENV-UNANALYSABLE``."""
    argv = [ruff_binary(), "check", "--isolated", "--ignore-noqa", "--no-cache", "--quiet", "--exit-zero",
            "--output-format", "json", "--line-length", str(RUFF_LINE_LENGTH), "--select", ",".join(RUFF_RULES)]

    def parse(out: str) -> list[tuple[str, str]]:
        try:
            return [(d.get("filename", ""), str(d.get("code") or "invalid-syntax")) for d in json.loads(out or "[]")]
        except (ValueError, AttributeError) as exc:
            raise QualityToolError(f"ruff printed something that is not JSON: {out[:200]!r}") from exc

    found = _findings("ruff", argv, sources, ".py", (0,), parse, stdin=lambda name: [f"--stdin-filename={name}", "-"])
    for path, codes in found.items():
        if "invalid-syntax" in codes:
            codes += [UNANALYSABLE] * (unanalysed_findings(sources[path]) - len(codes))
    return found


def _findings(tool: str, argv: list[str], sources: Mapping[str, bytes], suffix: str, ok_codes: tuple[int, ...],
              parse: Callable[[str], list[tuple[str, str]]],
              stdin: Callable[[str], list[str]] | None = None) -> dict[str, list[str]]:
    """Run *tool* once over copies of *sources*; map its findings back to the original paths.
    Where the tool reads a file from its standard input (*stdin* gives the arguments for a file
    name), a single file goes there, with no directory to lay out and remove (ruff: 4.9 instead
    of 6.7 ms of CPU, and ~1 ms less of this process's).

    The files are the agent's, and a crafted one can crash a tool (ruff overflows its stack on a
    deep enough expression). That is the agent's doing, so it must not mask the episode: when the
    batch fails, each file runs alone, and a file the tool cannot get through counts as
    ``AGENTENV-UNANALYSABLE`` findings, one per non-blank line (:func:`unanalysed_findings`), as
    a file past the size bound does with ``AGENTENV-TOO-LARGE``. Only a tool that fails on an empty
    file is the machinery's failure (:class:`QualityToolError`)."""
    found = {path: [TOO_LARGE] * unanalysed_findings(data) if len(data) > MAX_FILE_BYTES else []
             for path, data in sources.items()}
    small = {p: d for p, d in sources.items() if len(d) <= MAX_FILE_BYTES}
    if not small:
        return found

    deadline = time.monotonic() + TOOL_TIMEOUT_S

    def run(batch: Mapping[str, bytes]) -> list[tuple[str, str]] | None:
        timeout = max(1.0, deadline - time.monotonic())
        if stdin is not None and len(batch) == 1:
            ((path, data),) = batch.items()
            out = _run([*argv, *stdin(_safe_name(path, suffix))], None, tool, ok_codes, timeout, data)
            return None if out is None else [(path, code) for _file, code in parse(out)]
        with tempfile.TemporaryDirectory(prefix="agentenv-quality-") as tmp:
            names = _lay_out(tmp, batch, suffix)
            out = _run([*argv, "--", *sorted(names)], tmp, tool, ok_codes, timeout)
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
            results.extend(alone if alone is not None else [(path, UNANALYSABLE)] * unanalysed_findings(data))
    for path, code in results:
        found[path].append(code)
    return found


def _lay_out(tmp: str, sources: Mapping[str, bytes], suffix: str) -> dict[str, str]:
    """Write each file as ``<n>/<basename>`` under *tmp* (never the agent's own path: no traversal,
    no links); return ``{relative name under tmp: original path}``."""
    names: dict[str, str] = {}
    for i, (path, data) in enumerate(sorted(sources.items())):
        rel = os.path.join(str(i), _safe_name(path, suffix))
        os.mkdir(os.path.join(tmp, str(i)))
        with open(os.path.join(tmp, rel), "wb") as f:
            f.write(data)
        names[rel] = path
    return names


def _safe_name(path: str, suffix: str) -> str:
    """The file's base name made safe to give a tool (no directory, no leading dot)."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path))[-100:].lstrip(".") or "file"
    if suffix == ".py" and not base.endswith(suffix):  # ruff checks only what it takes for Python
        base += suffix
    return base


def _run(argv: list[str], cwd: str | None, tool: str, ok_codes: tuple[int, ...], timeout: float,
         data: bytes | None = None) -> str | None:
    """The tool's standard output (*data* on its standard input); None when it failed on these files
    (crashed, timed out)."""
    try:
        proc = subprocess.run(argv, cwd=cwd or "/", capture_output=True, timeout=timeout, input=data,
                              stdin=subprocess.DEVNULL if data is None else None,
                              # one thread: an episode's few files do not repay a pool's start (5.7 -> 4.2 ms)
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd or "/nonexistent",
                                   "LC_ALL": "C.UTF-8", "RAYON_NUM_THREADS": "1"})
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

def radon_measures(code: str) -> tuple[float, int]:
    """Radon's maintainability index (0-100) without the comment term, and the largest cyclomatic
    complexity of a function, method or the module body, from one parse. Code radon cannot get
    through (it does not parse, or is deep enough to exhaust radon's recursion): an index of 0 and
    :func:`complexity_bound`."""
    from radon.metrics import h_visit_ast, mi_compute
    from radon.raw import analyze
    from radon.visitors import ComplexityVisitor

    try:
        tree = ast.parse(code)
        visitor = ComplexityVisitor.from_ast(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0.0, complexity_bound(code)
    blocks = [visitor.complexity, *(fn.complexity for fn in visitor.functions),
              *(m.complexity for cls in visitor.classes for m in cls.methods)]
    try:  # radon's mi_parameters(code, count_multi=False), with the tree and visitor above
        volume, lloc = h_visit_ast(tree).total.volume, analyze(code).lloc
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, IndexError):
        return 0.0, int(max(blocks))
    return round(float(mi_compute(volume, visitor.total_complexity, lloc, 0)), 2), int(max(blocks))


def complexity_bound(code: str) -> int:
    """A complexity no block of *code* exceeds, for code radon cannot measure: 1 + the number of
    decision keywords anywhere in it. Radon adds at most 1 per such keyword to a block that starts
    at 1 (a ``for``/``while``/``try`` ``else`` adds 1 for its ``else``); words in strings and comments
    count too, so hiding code cannot lower it."""
    return 1 + len(_DECISION.findall(code))


def complexity(code: str) -> int:
    """The largest cyclomatic complexity of a function, method or the module body
    (:func:`complexity_bound` where radon cannot measure it)."""
    return radon_measures(code)[1]


def maintainability(code: str) -> float:
    """Radon's maintainability index (0-100) without the comment term; 0 for code that does not parse."""
    return radon_measures(code)[0]


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
    return _findings("shellcheck", [binary, "--norc", "--format=json1"], blanked, ".sh", (0, 1), parse)


# --------------------------------------------------------------------------- cache

class CachedAnalysis:
    """:func:`analyse` with a small LRU cache keyed by the files' content, so the scored runs of one
    evaluation (and repeated evaluations of the same solution) measure once. :meth:`start` begins
    an analysis on a worker thread (ruff is a subprocess, so it overlaps the scored command) and
    calling the object waits for it."""

    def __init__(self, size: int = 256):
        self._size = size
        self._cache: collections.OrderedDict[bytes, concurrent.futures.Future] = collections.OrderedDict()
        self._lock = threading.Lock()
        # (threads start on demand, up to the executor's default: the cores plus 4)
        self._pool = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="agentenv-quality")

    def start(self, files: Mapping[str, bytes]) -> concurrent.futures.Future:
        return self._start(_digest(files), files)

    def __call__(self, files: Mapping[str, bytes]) -> QualityReport:
        key = _digest(files)
        future = self._start(key, files)
        try:
            return future.result()
        except BaseException:
            with self._lock:  # a failure is not remembered: the next call tries again
                if self._cache.get(key) is future:
                    del self._cache[key]
            raise

    def _start(self, key: bytes, files: Mapping[str, bytes]) -> concurrent.futures.Future:
        with self._lock:
            future = self._cache.get(key)
            if future is not None:
                self._cache.move_to_end(key)
                return future
            future = self._cache[key] = self._pool.submit(analyse, dict(files))
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return future


def _digest(files: Mapping[str, bytes]) -> bytes:
    digest = hashlib.sha256()
    for path, data in sorted(files.items()):
        digest.update(hashlib.sha256(path.encode("utf-8", "surrogateescape")).digest())
        digest.update(hashlib.sha256(data).digest())
    return digest.digest()
