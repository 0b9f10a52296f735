"""Scoring files with a trained checkpoint: chunking, batching, calibration, aggregation.

A file is cut into the units the model was trained on: each function and method (nested ones stay
with their parent), each class's own statements, and the module's statements (imports and the
module docstring left out). Units with fewer than :data:`MIN_CHUNK_TOKENS` code tokens are pooled
into one. Every unit gets a calibrated score in [0, 1]; a set of files scores the *minimum* over its
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
MIN_CHUNK_TOKENS = 12
BATCH = 64
AGGREGATES = ("min", "mean")


def units(source: str) -> list[str] | None:
    """The scoring units of one file (see the module docstring); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    module_rest: list[str] = []

    def first(node: ast.AST) -> int:
        return min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno]) - 1

    def span(node: ast.AST) -> list[str]:
        return lines[first(node):node.end_lineno]

    for index, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append("".join(span(stmt)))
        elif isinstance(stmt, ast.ClassDef):
            own = lines[first(stmt):first(stmt.body[0])]
            for member in stmt.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append(_dedent(span(member)))
                else:
                    own += span(member)
            out.append("".join(own) if len(own) > 1 else "")
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        elif index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the module docstring
        else:
            module_rest += span(stmt)
    out.append("".join(module_rest))
    return [u for u in out if u.strip()]


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

    def score_snippets(self, sources: Sequence[str]) -> list[float | None]:
        """Calibrated scores of code snippets (a function each, say); None where it does not tokenize."""
        keys = [hashlib.sha256(s.encode("utf-8", "surrogatepass")).digest() for s in sources]
        results: list[float | None] = [None] * len(sources)
        todo: dict[bytes, tuple[int, Encoded]] = {}
        with self._lock:
            for i, key in enumerate(keys):
                if key in self._cache:
                    self._cache.move_to_end(key)
                    results[i] = self._cache[key]
        for i, (key, src) in enumerate(zip(keys, sources)):
            if results[i] is None and key not in todo:
                encoded = encode(src)
                if encoded is not None and 0 < len(encoded) <= MAX_UNIT_TOKENS:
                    todo[key] = (i, encoded)
        if todo:
            found = self.logits([e for _, e in todo.values()])
            with self._lock:
                for key, logit in zip(todo, found):
                    self._cache[key] = self.probability(logit)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            for i, key in enumerate(keys):
                if results[i] is None and key in self._cache:
                    results[i] = self._cache[key]
        return results

    # ---- files
    def score_files(self, files: Mapping[str, bytes | str], aggregate: str = "min") -> Scores:
        if aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, not {aggregate!r}")
        chosen = sorted(files.items())
        results = [FileScore(path, 0.0, problem="past the file count bound") for path, _ in chosen[MAX_FILES:]]
        pending: list[tuple[FileScore, list[str]]] = []
        for path, data in chosen[:MAX_FILES]:
            text, problem = _decode(data)
            pieces = units(text) if text is not None else None
            if problem is None and pieces is None:
                problem = "does not parse"
            if problem is not None:
                results.append(FileScore(path, 0.0, problem=problem))
                continue
            pending.append((FileScore(path, None), _pool_small(pieces)))
        budget = MAX_UNITS
        for record, pieces in pending:
            if len(pieces) > budget:
                record.score, record.problem = 0.0, "past the bound on units"
                results.append(record)
                continue
            budget -= len(pieces)
            scores = self.score_snippets(pieces)
            record.units = [0.0 if s is None else s for s in scores]  # a unit too long or untokenizable scores 0
            record.weights = [_code_tokens(p) for p in pieces]
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


def _code_tokens(source: str) -> int:
    encoded = encode(source)
    return encoded.code_tokens if encoded is not None else 1


def _pool_small(pieces: list[str]) -> list[str]:
    """Units too small to judge alone are pooled into one (they stay scored: none is dropped)."""
    big = [p for p in pieces if _code_tokens(p) >= MIN_CHUNK_TOKENS]
    small = [p for p in pieces if _code_tokens(p) < MIN_CHUNK_TOKENS]
    if small:
        big.append("\n\n".join(p.rstrip("\n") for p in small) + "\n")
    return big


def _combine(scores: Sequence[float], weights: Sequence[int], aggregate: str) -> float:
    if not scores:
        return 0.0
    if aggregate == "min":
        return min(scores)
    total = sum(max(1, w) for w in weights)
    return sum(s * max(1, w) for s, w in zip(scores, weights)) / total
