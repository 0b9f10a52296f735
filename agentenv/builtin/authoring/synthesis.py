"""Repair tasks synthesized from a real package: mutate its source, keep the mutants its tests catch.

``agentenv synthesize PACKAGE==VERSION --out tasks/<suite>``:

1. pins the package's source distribution from the registry (version + sha256; cached) and finds
   its tests and its modules;
2. runs the package's own tests on the unmodified source in a real sandbox, through a
   :class:`~agentenv.CodingEnv` (every one must pass: that is the reference's full marks);
3. enumerates mutants with ``ast`` (flip a comparison, drop a ``return``, change a constant, swap
   two arguments, remove an ``if`` branch), each edited into the original text so the rest of the
   file keeps its formatting and comments;
4. evaluates mutants in a seeded order, round-robin over the operators and at most
   ``per_function`` per function, keeping those that make at least one previously-passing test
   fail while every test is still collected (an import crash or a hang is discarded);
5. writes one task per kept mutant: the workspace is the sdist plus the mutated file, the scored
   tests are the package's own, the reference is the original file, and ``metadata.mutation``
   records what was changed where.
"""

from __future__ import annotations

import ast
import json
import os
import random
import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

import gymnasium as gym

from agentenv import PLACEHOLDER, Sdist, SynthesisError, parse_task, pin_sdist, sdist_files

from .humaneval import gym_name

OPERATORS = ("flip_comparison", "drop_return", "change_constant", "swap_arguments", "remove_branch")
TEST_DEPENDENCIES = ("pytest==8.3.5", "pytest-json-report==1.5.0")


@dataclass(frozen=True)
class Mutation:
    operator: str
    file: str
    function: str
    line: int
    col: int
    original: str  # the source text that was replaced
    replacement: str
    description: str


# --------------------------------------------------------------------------- mutation operators

_FLIP = {ast.Lt: (ast.LtE, r"<(?!=)", "<="), ast.LtE: (ast.Lt, r"<=", "<"), ast.Gt: (ast.GtE, r">(?!=)", ">="),
         ast.GtE: (ast.Gt, r">=", ">"), ast.Eq: (ast.NotEq, r"==", "!="), ast.NotEq: (ast.Eq, r"!=", "=="),
         ast.In: (ast.NotIn, r"(?<!not )\bin\b", "not in"), ast.NotIn: (ast.In, r"\bnot\s+in\b", "in"),
         ast.Is: (ast.IsNot, r"\bis\b(?!\s+not\b)", "is not"), ast.IsNot: (ast.Is, r"\bis\s+not\b", "is")}


class _Source:
    """Offsets into the text from ast positions (which count UTF-8 bytes within a line)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset))

    def segment(self, node: ast.AST) -> str:
        a, b = self.span(node)
        return self.text[a:b]


Edit = tuple[int, int, str]


def _remove_statement(src: _Source, stmt: ast.stmt, body: list[ast.stmt]) -> Edit:
    a, b = src.span(stmt)
    line_start = src.starts[stmt.lineno - 1]
    line_end = src.starts[stmt.end_lineno]
    whole_lines = not src.text[line_start:a].strip() and not src.text[b:line_end].strip()
    if len(body) > 1 and whole_lines:
        return line_start, line_end, ""
    return a, b, "pass"


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, function node) for every function, methods and nested ones too."""
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)
    yield from walk(tree, "")


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of *func*'s body, not descending into nested functions, classes or annotations."""
    stack = list(reversed(func.body))
    first = func.body[0] if func.body else None
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if node is first and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            continue  # the docstring
        yield node
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns"):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend(reversed([c for c in children if isinstance(c, ast.AST)]))


def _bodies(func: ast.AST) -> dict[int, list[ast.stmt]]:
    """id(statement) -> the statement list it sits in."""
    out: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(func):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for stmt in block:
                    out[id(stmt)] = block
        for handler in getattr(node, "handlers", []) or []:
            for stmt in handler.body:
                out[id(stmt)] = handler.body
    return out


def _candidates(src: _Source, func: ast.AST) -> Iterator[tuple[str, ast.AST, list[Edit], str]]:
    """(operator, located node, edits, description) for every mutation site of one function."""
    bodies = _bodies(func)
    for node in _own_nodes(func):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                flip = _FLIP.get(type(op))
                if flip is None:
                    continue
                a, b = src.span(operands[i])[1], src.span(operands[i + 1])[0]
                m = re.search(flip[1], src.text[a:b])
                if m:
                    old = m.group(0)
                    yield ("flip_comparison", node, [(a + m.start(), a + m.end(), flip[2])],
                           f"comparison `{old}` flipped to `{flip[2]}`")
        elif isinstance(node, ast.Return) and node.value is not None:
            yield ("drop_return", node, [_remove_statement(src, node, bodies.get(id(node), []))],
                   f"`{src.segment(node)[:60]}` dropped")
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)) and node.value is not None \
                and node.value is not Ellipsis:
            value = node.value
            new = (not value) if isinstance(value, bool) else value + 1
            yield ("change_constant", node, [(*src.span(node), repr(new))], f"constant {value!r} changed to {new!r}")
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and not any(
                isinstance(a, ast.Starred) for a in node.args[:2]):
            first, second = src.segment(node.args[0]), src.segment(node.args[1])
            if first != second:
                (a0, b0), (a1, b1) = src.span(node.args[0]), src.span(node.args[1])
                callee = src.segment(node.func)[:40]
                yield ("swap_arguments", node, [(a0, b0, second), (a1, b1, first)],
                       f"the first two arguments of `{callee}(...)` swapped")
        elif isinstance(node, ast.If) and not node.orelse:
            test = src.segment(node.test)[:60]
            yield ("remove_branch", node, [_remove_statement(src, node, bodies.get(id(node), []))],
                   f"the branch `if {test}:` removed")


def _apply(text: str, edits: list[Edit]) -> str:
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def mutants(text: str, file: str) -> list[tuple[Mutation, str]]:
    """Every syntactically valid single mutant of *text* (a module's source), in source order."""
    tree = ast.parse(text)
    src = _Source(text)
    out = []
    for qualname, func in _functions(tree):
        for operator, node, edits, description in _candidates(src, func):
            mutated = _apply(text, edits)
            if mutated == text:
                continue
            try:
                ast.parse(mutated)
            except SyntaxError:
                continue
            a = min(e[0] for e in edits)
            b = max(e[1] for e in edits)
            replacement = _apply(text[a:b], [(x - a, y - a, new) for x, y, new in edits])
            out.append((Mutation(operator, file, qualname, node.lineno, node.col_offset, text[a:b], replacement,
                                 description), mutated))
    return out


def schedule(found: list[tuple[Mutation, str]], seed: int) -> list[tuple[Mutation, str]]:
    """A seeded order that alternates between the operators, so every kind gets tried early."""
    rng = random.Random(seed)
    groups: dict[str, list[tuple[Mutation, str]]] = {}
    for item in found:
        groups.setdefault(item[0].operator, []).append(item)
    for items in groups.values():
        rng.shuffle(items)
    order = [op for op in OPERATORS if op in groups]
    out = []
    while any(groups.values()):
        for op in order:
            if groups[op]:
                out.append(groups[op].pop())
    return out


# --------------------------------------------------------------------------- discovery

def find_tests(files: dict[str, bytes]) -> list[str]:
    """The package's test locations (relative to the sdist root): test directories, else test files."""
    dirs = sorted({p.split("/")[0] for p in files if "/" in p and p.split("/")[0] in ("tests", "test", "testing")})
    if dirs:
        return dirs
    top = sorted(p for p in files if "/" not in p and re.fullmatch(r"test_.*\.py|.*_test\.py", p))
    if top:
        return top
    return sorted({p.rsplit("/", 1)[0] for p in files if re.search(r"(^|/)tests?/", p) and p.endswith(".py")})


def find_modules(files: dict[str, bytes]) -> list[str]:
    """Python modules of the package that are not tests, docs, build scripts or examples."""
    skip = re.compile(r"(^|/)(tests?|testing|docs?|examples?|benchmarks?|build|\.[^/]*)/|(^|/)(setup|conftest|noxfile|"
                      r"fabfile)\.py$|(^|/)test_[^/]*\.py$|_test\.py$|\.egg-info/")
    return sorted(p for p in files if p.endswith(".py") and "/" in p and not skip.search(p))


# --------------------------------------------------------------------------- tasks

def base_task(sdist: Sdist, module: str, tests: list[str], task_id: str) -> dict[str, Any]:
    """A task document whose workspace is the unmodified sdist and whose single-shot file is *module*."""
    command = "python -m pytest -q -p no:cacheprovider " + " ".join(tests) + " --json-report"
    return {
        "task_id": task_id,
        "version": 0,
        "environment_config": {"runtime": "python3.11", "dependencies": list(TEST_DEPENDENCIES),
                               "env": {"PYTHONPATH": "/app"}},
        "workspace": {"root": "/app", "sdist": sdist.to_json()},
        "execution_steps": [
            {"action": "overwrite_file", "path": f"/app/{module}", "content": PLACEHOLDER},
            {"action": "run_command", "command": command},
        ],
        "reward_logic": {"type": "composite", "rules": [
            {"metric": "test_pass_rate", "weight": 1.0, "aggregation": "last", "threshold": 1.0, "scoring": "step"}]},
        "limits": {"wall_time_s": 120, "memory_mb": 1024},
        "max_rounds": 30,
        "reference_solution": {"sdist": {**sdist.to_json(), "include": [module]}},
    }


def _test_names(nodes: list[str]) -> list[str]:
    names = []
    for node in nodes:
        name = node.split("[", 1)[0]
        if name not in names:
            names.append(name)
    return names


def describe(sdist: Sdist, mutation: Mutation, failing: list[str], error: dict[str, str] | None) -> str:
    """The prompt: what a user would report (which tests broke, how), not the fix."""
    names = _test_names(failing)
    shown = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    text = (f"After a recent edit to `{mutation.file}` in our vendored copy of {sdist.package} {sdist.version}, "
            f"{len(failing)} of the package's own tests fail: {shown}.")
    if error and error.get("message"):
        text += f" The first failure reports {error.get('type', 'an error')}: {error['message'][:200]}."
    return text + (" Find the bug in the package's code and fix it so that the whole test suite passes again; "
                   "the tests themselves are correct.")


def difficulty(failing: int) -> str:
    # Many failing tests point straight at the broken behaviour; one or two leave more to find.
    return "easy" if failing >= 20 else "medium" if failing >= 3 else "hard"


def classify(metrics: dict[str, Any], baseline: dict[str, str]) -> tuple[str | None, list[str]]:
    """(why the mutant is discarded or None to keep it, the previously-passing tests it fails)."""
    outcomes = metrics.get("test_outcomes") or {}
    failing = sorted(n for n, o in outcomes.items() if o != "passed" and baseline.get(n) == "passed")
    if metrics.get("report") == "missing" or any(n.endswith("::<collection>") for n in outcomes) \
            or not set(baseline) <= set(outcomes):
        return "breaks collection or hangs", failing
    if not failing:
        return "no test notices it", failing
    return None, failing


class MutantRunner:
    """Runs the package's tests on one variant of a module, in a real sandbox, through CodingEnv.

    One single-shot environment per module: the pristine workspace (the sdist) is laid out once and
    each variant is the single-shot action that replaces the module.
    """

    def __init__(self, sdist: Sdist, tests: list[str], suite: str = "synth", backend: str = "auto"):
        self.sdist, self.tests, self.suite, self.backend = sdist, tests, suite, backend
        self.envs: dict[str, Any] = {}

    def run(self, module: str, code: str) -> dict[str, Any]:
        """The metrics of one scored test run (``test_outcomes``, ``report``, ``error``, ...)."""
        if module not in self.envs:
            doc = base_task(self.sdist, module, self.tests, f"{self.suite}.baseline")
            self.envs[module] = gym.make("agentenv/Task-v0", task=parse_task(doc, source=f"{self.sdist.package} baseline"),
                                         backend=self.backend)
        env = self.envs[module]
        env.reset()
        _, _, _, _, info = env.step(code)
        if info.get("reward_masked"):
            raise SynthesisError(f"the sandbox failed while testing {module}: {info.get('infra_error')}")
        return dict(info["metrics"])

    def baseline(self, module: str, code: str, what: str) -> dict[str, str]:
        """Outcomes of the unmodified package; every test must pass (it is the reference's full marks)."""
        outcomes = self.run(module, code).get("test_outcomes") or {}
        bad = sorted(n for n, o in outcomes.items() if o != "passed")
        if not outcomes or bad:
            raise SynthesisError(f"{what}: the package's own tests do not all pass unmodified in the sandbox "
                                 f"({len(bad)} of {len(outcomes)} not passing: {', '.join(bad[:5])}); "
                                 "select passing ones with --tests")
        return outcomes

    def close(self) -> None:
        for env in self.envs.values():
            env.close()
        self.envs.clear()

    def __enter__(self) -> "MutantRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class SynthesisReport:
    sdist: Sdist
    modules: list[str]
    tests: list[str]
    baseline_tests: int
    candidates: int
    tried: int = 0
    kept: int = 0
    discarded: dict[str, int] | None = None
    written: list[str] | None = None


def synthesize(requirement: str, out: str, *, suite: str | None = None, max_tasks: int = 15, seed: int = 0,
               modules: list[str] | None = None, tests: list[str] | None = None, per_function: int = 1,
               max_attempts: int = 200, backend: str = "auto",
               progress: Callable[[str], None] | None = None) -> SynthesisReport:
    """Generate up to *max_tasks* repair tasks from *requirement* (``NAME==VERSION``) into *out*."""
    say = progress or (lambda message: None)
    m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s=]+)\s*", requirement)
    if not m:
        raise SynthesisError(f"{requirement!r}: give the package pinned to one version, NAME==VERSION "
                             "(e.g. inflection==0.5.1)")
    suite = gym_name(suite or os.path.basename(os.path.normpath(out)))
    say(f"pinning {m.group(1)}=={m.group(2)} (sdist from the package registry)")
    sdist = pin_sdist(m.group(1), m.group(2))
    files = sdist_files(sdist)
    tests = tests or find_tests(files)
    if not tests:
        raise SynthesisError(f"{requirement}: found no tests in its sdist (no tests/ directory, no test_*.py); "
                             "this package cannot be used, or name them with --tests")
    missing = [t for t in tests if t not in files and not any(p.startswith(t.rstrip("/") + "/") for p in files)]
    if missing:
        raise SynthesisError(f"--tests: {', '.join(missing)} not in the sdist; it has {', '.join(find_tests(files)) or 'no tests'}")
    modules = modules or find_modules(files)
    if not modules:
        raise SynthesisError(f"{requirement}: no Python modules to mutate were found; name them with --module")
    for module in modules:
        if module not in files:
            raise SynthesisError(f"--module {module}: not in the sdist; modules there: {', '.join(find_modules(files))}")
    say(f"sdist sha256 {sdist.sha256}; tests: {', '.join(tests)}; modules: {', '.join(modules)}")

    found: list[tuple[Mutation, str]] = []
    for module in modules:
        found += mutants(files[module].decode("utf-8"), module)
    report = SynthesisReport(sdist, modules, tests, 0, len(found), discarded={})
    kept: list[tuple[Mutation, str, list[str], dict | None]] = []
    with MutantRunner(sdist, tests, suite, backend) as runner:
        baselines: dict[str, dict[str, str]] = {}
        for module in modules:
            baselines[module] = runner.baseline(module, files[module].decode("utf-8"), requirement)
            report.baseline_tests = len(baselines[module])
        say(f"baseline: all {report.baseline_tests} tests pass; {len(found)} candidate mutants")
        per_func: dict[tuple[str, str], int] = {}
        for mutation, code in schedule(found, seed):
            if len(kept) >= max_tasks or report.tried >= max_attempts:
                break
            key = (mutation.file, mutation.function)
            if per_func.get(key, 0) >= per_function:
                continue
            report.tried += 1
            metrics = runner.run(mutation.file, code)
            why, failing = classify(metrics, baselines[mutation.file])
            where = f"  [{report.tried}] {mutation.operator} in {mutation.function} (line {mutation.line})"
            if why:
                report.discarded[why] = report.discarded.get(why, 0) + 1
                say(f"{where}: discarded, {why}")
                continue
            per_func[key] = per_func.get(key, 0) + 1
            kept.append((mutation, code, failing, metrics.get("error")))
            say(f"{where}: kept, {len(failing)} test(s) fail  ({len(kept)}/{max_tasks})")

    report.kept = len(kept)
    report.written = write_suite(out, suite, sdist, tests, kept, seed)
    return report


def write_suite(out: str, suite: str, sdist: Sdist, tests: list[str],
                kept: list[tuple[Mutation, str, list[str], dict | None]], seed: int) -> list[str]:
    tasks_dir = os.path.join(out, "tasks")
    os.makedirs(tasks_dir, exist_ok=True)
    for old in os.listdir(tasks_dir):  # a re-run replaces the suite's generated tasks
        if old.endswith(".json"):
            os.remove(os.path.join(tasks_dir, old))
    written, taken = [], set()
    package = gym_name(sdist.package.replace("-", "_"))
    for mutation, code, failing, error in kept:
        name = gym_name(f"{package}_{mutation.function.replace('.', '_')}_{mutation.operator}_L{mutation.line}")
        while name in taken:
            name += "_b"
        taken.add(name)
        doc = base_task(sdist, mutation.file, tests, f"{suite}.{name}")
        doc = {"task_id": doc.pop("task_id"), "version": doc.pop("version"),
               "description": describe(sdist, mutation, failing, error), **doc}
        doc["workspace"]["files"] = {mutation.file: code}
        doc["tags"] = ["synthesized", "mutation", mutation.operator, sdist.package]
        doc["difficulty"] = difficulty(len(failing))
        doc["expected_duration_s"] = 3.0
        doc["metadata"] = {
            "generator": "agentenv synthesize",
            "seed": seed,
            "package": {"name": sdist.package, "version": sdist.version, "sha256": sdist.sha256},
            "mutation": asdict(mutation),
            "failing_tests": failing[:25],
            "failing_count": len(failing),
        }
        parse_task(doc, source=name)
        path = os.path.join(tasks_dir, f"{name}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        written.append(path)
    with open(os.path.join(out, "suite.json"), "w") as f:
        json.dump({"name": suite, "version": "1.0.0",
                   "description": f"Repair tasks synthesized by mutating {sdist.package} {sdist.version}; the scored "
                                  "tests are the package's own, fetched from the registry (pinned by sha256).",
                   "tasks": ["tasks/*.json"]}, f, indent=1)
        f.write("\n")
    return written
