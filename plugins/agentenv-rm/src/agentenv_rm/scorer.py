"""Scoring files with a trained checkpoint: chunking, batching, calibration, aggregation.

A file is cut into the units the model was trained on: each function and method (nested ones stay
with their parent), each class's own statements, and each run of module statements (imports and
the module docstring left out). Statements outside functions with fewer than
:data:`MIN_CHUNK_TOKENS` code tokens join the unit that follows them; a function always stands
alone. Every unit gets a calibrated score in [0, 1]; a set of files scores the *minimum* over its
units by default, so neither a tidy unrelated function appended to a file nor an extra file can
lift messy code (``aggregate: "mean"`` weighs units by their code tokens instead).

Bounds (the files are the agent's): past :data:`MAX_FILES` files, :data:`MAX_FILE_BYTES` bytes in a
file, :data:`MAX_UNITS` units or :data:`MAX_UNIT_TOKENS` tokens in a unit, or for a file that does
not parse or decode, the code scores 0.
"""

from __future__ import annotations

import ast
import collections
import hashlib
import math
import threading
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import torch

from .model import ReadabilityNet, collate, load_checkpoint
from .tokens import Encoded, encode

MAX_FILES = 64
MAX_FILE_BYTES = 256_000
MAX_UNITS = 512
MAX_UNIT_TOKENS = 1024
MIN_CHUNK_TOKENS = 40  # about the 4 lines of the smallest functions the model was trained on
BATCH = 64
AGGREGATES = ("min", "mean")


def units(source: str) -> list[tuple[str, bool]] | None:
    """The scoring units of one file in file order, each with whether it is a function or method
    (see the module docstring); None when the file does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = source.splitlines(keepends=True)
    out: list[tuple[int, str, bool]] = []  # (first line, text, a function?)
    run: list[str] = []  # consecutive module statements
    run_start = 0

    def first(node: ast.AST) -> int:
        return min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno]) - 1

    def span(node: ast.AST) -> list[str]:
        return lines[first(node):node.end_lineno]

    def flush() -> None:
        if run:
            out.append((run_start, "".join(run), False))
            run.clear()

    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
                index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            continue  # imports and the module docstring
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            flush()
            out.append((first(stmt), "".join(span(stmt)), True))
        elif isinstance(stmt, ast.ClassDef):
            flush()
            own = lines[first(stmt):first(stmt.body[0])]
            for member in stmt.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((first(member), _dedent(span(member)), True))
                else:
                    own += span(member)
            if len(own) > 1:
                out.append((first(stmt), "".join(own), False))
        else:
            if not run:
                run_start = first(stmt)
            run += span(stmt)
    flush()
    return [(text, is_def) for _, text, is_def in sorted(out, key=lambda unit: unit[0]) if text.strip()]


@dataclass
class FileScore:
    path: str
    score: float | None  # None: no code to score in it
    units: list[float] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)  # code tokens of each unit
    problem: str | None = None


@dataclass
class Scores:
    """The scores of a set of files: ``total`` over all their units, and per file."""

    total: float
    files: list[FileScore]


class Scorer:
    """A loaded checkpoint that scores code; thread-safe; caches unit scores by content."""

    def __init__(self, checkpoint: str, device: str = "cpu", cache_size: int = 4096):
        net, calibration, meta = load_checkpoint(checkpoint)
        self.path, self.meta, self.calibration = checkpoint, meta, calibration
        self.device = device
        self.net: ReadabilityNet = net.to(device)
        self._cache: collections.OrderedDict[bytes, float] = collections.OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # ---- raw model scores
    def logits(self, encoded: Sequence[Encoded]) -> list[float]:
        """The network's score of each encoded snippet (batched, longest first)."""
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        out = [0.0] * len(encoded)
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                batch = order[start:start + BATCH]
                values = self.net(collate([encoded[i] for i in batch], self.device)).tolist()
                for i, v in zip(batch, values):
                    out[i] = float(v)
        return out

    def probability(self, logit: float) -> float:
        z = self.calibration["a"] * logit + self.calibration["b"]
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def score_snippets(self, sources: Sequence[str],
                       encoded: Sequence[Encoded | None] | None = None) -> list[float | None]:
        """Calibrated scores of code snippets (a function each, say), in batches; None where it does
        not tokenize or is longer than :data:`MAX_UNIT_TOKENS` tokens. *encoded*: their encodings,
        when the caller has them already."""
        keys = [hashlib.sha256(s.encode("utf-8", "surrogatepass")).digest() for s in sources]
        found: dict[bytes, float | None] = {}
        with self._lock:
            for key in keys:
                if key in self._cache:
                    self._cache.move_to_end(key)
                    found[key] = self._cache[key]
        todo: dict[bytes, Encoded] = {}
        for i, (key, src) in enumerate(zip(keys, sources)):
            if key not in found and key not in todo:
                e = encoded[i] if encoded is not None else encode(src)
                if e is not None and 0 < len(e) <= MAX_UNIT_TOKENS:
                    todo[key] = e
                else:
                    found[key] = None
        if todo:
            computed = {key: self.probability(v) for key, v in zip(todo, self.logits(list(todo.values())))}
            found.update(computed)
            with self._lock:
                self._cache.update(computed)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [found[key] for key in keys]

    # ---- files
    def score_files(self, files: Mapping[str, bytes | str], aggregate: str = "min") -> Scores:
        """Score every unit of every file in one batch; see the module docstring for the bounds."""
        if aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, not {aggregate!r}")
        chosen = sorted(files.items())
        results = [FileScore(path, 0.0, problem="past the file count bound") for path, _ in chosen[MAX_FILES:]]
        accepted: list[tuple[FileScore, list[tuple[str, Encoded | None]]]] = []
        budget = MAX_UNITS
        for path, data in chosen[:MAX_FILES]:
            text, problem = _decode(data)
            pieces = units(text) if text is not None else None
            if problem is None and pieces is None:
                problem = "does not parse"
            if problem is None:
                pieces = _pool_small(pieces)
                if len(pieces) > budget:
                    problem = "past the bound on units"
            if problem is not None:
                results.append(FileScore(path, 0.0, problem=problem))
                continue
            budget -= len(pieces)
            accepted.append((FileScore(path, None, weights=[e.code_tokens if e else 1 for _, e in pieces]), pieces))
        scores = self.score_snippets([s for _, pieces in accepted for s, _ in pieces],
                                     [e for _, pieces in accepted for _, e in pieces])
        start = 0
        for record, pieces in accepted:
            # a unit too long or untokenizable scores 0
            record.units = [0.0 if s is None else s for s in scores[start:start + len(pieces)]]
            start += len(pieces)
            record.score = _combine(record.units, record.weights, aggregate) if pieces else None
            results.append(record)
        every = [(s, w) for r in results for s, w in zip(r.units, r.weights)]
        every += [(0.0, 1) for r in results if r.problem is not None]
        total = _combine([s for s, _ in every], [w for _, w in every], aggregate) if every else 0.0
        return Scores(total, sorted(results, key=lambda r: r.path))


def _dedent(lines: list[str]) -> str:
    """Lines of a method moved to column 0 (as the model saw functions in training); lines that do not
    start with the method's indentation (inside a multi-line string) stay as they are."""
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    return "".join(line[len(indent):] if line.startswith(indent) else line for line in lines)


def _decode(data: bytes | str) -> tuple[str | None, str | None]:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES} bytes"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not UTF-8"


def _pool_small(pieces: list[tuple[str, bool]]) -> list[tuple[str, Encoded | None]]:
    """The units with their encodings. Statements outside functions too small to judge alone (a
    constant, a main guard) join the unit that follows them in the file (the one before, at the
    end), as a reader meets them: none is dropped. A function always stands alone, however small:
    joined to a tidy neighbour, a messy one would borrow its score."""
    out: list[tuple[str, Encoded | None]] = []
    carry: list[str] = []
    for piece, is_def in pieces:
        e = encode(piece)
        if not is_def and e is not None and e.code_tokens < MIN_CHUNK_TOKENS:
            carry.append(piece)
            continue
        if carry and e is not None:
            piece = _join(carry + [piece])
            e = encode(piece)
        elif carry:
            out.append((_join(carry), encode(_join(carry))))
        carry = []
        out.append((piece, e))
    if carry:
        if out and out[-1][1] is not None:
            joined = _join([out[-1][0], *carry])
            out[-1] = (joined, encode(joined))
        else:
            out.append((_join(carry), encode(_join(carry))))
    return out


def _join(pieces: list[str]) -> str:
    return "\n\n".join(p.rstrip("\n") for p in pieces) + "\n"


def _combine(scores: Sequence[float], weights: Sequence[int], aggregate: str) -> float:
    if not scores:
        return 0.0
    if aggregate == "min":
        return min(scores)
    total = sum(max(1, w) for w in weights)
    return sum(s * max(1, w) for s, w in zip(scores, weights)) / total
