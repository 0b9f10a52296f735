"""Build the testwriting suite: hidden variants and mutants of each module, the task documents.

    python tasks/testwriting/build.py [NAME ...]     # rebuild tasks (all by default); needs pytest + coverage
    python tasks/testwriting/build.py --check        # exit 1 when an inlined check program is stale
    python tasks/testwriting/build.py --inline-only  # rewrite only the inlined check programs

Per task folder, the hand-written inputs are ``workspace/<module>.py`` (the correct module) and
``solution/tests/test_<module>.py`` (the reference tests). The build

1. makes behaviour-preserving variants of the module with seeded ``ast`` rewrites (locals renamed,
   results returned through a temporary, comparisons with a constant mirrored, ``if``/``else``
   branches swapped under ``not``, methods reordered, comments and layout dropped), checks that every
   function's text changes in some variant and that the reference tests pass on each;
2. takes every mutant of the module from the synthesis engine
   (``agentenv.builtin.authoring.synthesis.mutants``), keeps those the reference tests kill (a
   survivor is equivalent or untested: dropped) and chooses up to ``MAX_MUTANTS`` in a seeded order,
   spread over the functions (at most two a function when there are enough);
3. checks that the reference tests reach 100% branch coverage and that the workspace's stub test
   kills no mutant (the no-op scores 0);
4. writes ``hidden/.check/subjects.json`` and ``task.json``.
"""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "_harness"))
import buildlib  # noqa: E402

MAX_MUTANTS = 12
PER_FUNCTION = 2
SEED = 16
COMMAND = ["python", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests"]
DEPENDENCIES = ["pytest==8.3.5", "coverage==7.6.1"]

TASKS = {
    "intervals": ("half-open time intervals: overlap, containment, merging, free slots between bookings", "medium"),
    "semver": ("semantic versions: parsing, precedence with pre-releases, bumping, the latest release", "hard"),
    "lru_cache": ("an LRU cache with hit statistics, eviction and resizing", "easy"),
    "slugify": ("URL slugs: transliteration, separators, stop words, length limits, unique slugs", "medium"),
    "money_split": ("money in cents: parsing, formatting, even and weighted splits that never lose a cent", "medium"),
    "token_bucket": ("a token-bucket rate limiter with an injectable clock, and a per-key limiter", "medium"),
    "csv_line": ("parsing and formatting one CSV record with RFC 4180 quoting", "hard"),
    "durations": ("human durations such as '1h 30m': strict parsing and formatting", "medium"),
    "roman": ("Roman numerals both ways, refusing non-standard forms", "easy"),
    "word_wrap": ("greedy word wrapping, indentation and justification", "medium"),
    "paginator": ("pagination: page counts, slices, previous/next and the page-link window with gaps", "medium"),
    "byte_size": ("byte sizes such as '1.5 GiB' and '10MB': parsing and human formatting", "medium"),
    "cron_field": ("crontab fields ('*/15', 'mon-fri', '1-10/3') parsed into the values they match", "hard"),
    "iban": ("IBAN validation (mod 97), formatting and check-digit computation", "medium"),
    "business_days": ("business-day arithmetic with weekends, holidays and an order cut-off hour", "medium"),
}


# --------------------------------------------------------------------------- behaviour-preserving variants

class _Rewrite(ast.NodeTransformer):
    """One seeded family of rewrites that keep behaviour (see the module docstring)."""

    def __init__(self, rng: random.Random, *, rename: bool, temp_return: bool, mirror: str, swap_if: bool,
                 reorder: bool, prefix: str):
        self.rng, self.rename, self.temp_return = rng, rename, temp_return
        self.mirror, self.swap_if, self.reorder, self.prefix = mirror, swap_if, reorder, prefix
        self.counter = 0

    def _fresh(self) -> str:
        self.counter += 1
        return f"{self.prefix}{self.counter}"

    def visit_Module(self, node):
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        if self.reorder:
            node.body = _reorder(node.body, self.rng)
        return node

    def visit_FunctionDef(self, node):
        if self.rename and _renamable(node):
            _rename_locals(node, self._fresh)
        self.generic_visit(node)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if not self.mirror or len(node.ops) != 1:
            return node
        mirrored = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq,
                    ast.NotEq: ast.NotEq}
        op, right = node.ops[0], node.comparators[0]
        numeric = isinstance(right, ast.Constant) and type(right.value) in (int, float)
        constant = numeric or (type(op) in (ast.Eq, ast.NotEq) and isinstance(right, ast.Constant))
        if type(op) in mirrored and (constant or self.mirror == "all"):
            return ast.Compare(left=right, ops=[mirrored[type(op)]()], comparators=[node.left])
        return node

    def visit_If(self, node):
        self.generic_visit(node)
        if self.swap_if and node.orelse:
            test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
                else ast.UnaryOp(op=ast.Not(), operand=node.test)
            return ast.If(test=test, body=node.orelse, orelse=node.body)
        return node


def _reorder(body: list, rng: random.Random) -> list:
    """Shuffle runs of undecorated methods (their order never matters)."""
    out, run = [], []
    for stmt in body + [None]:
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
            run.append(stmt)
            continue
        rng.shuffle(run)
        out += run
        run = []
        if stmt is not None:
            out.append(stmt)
    return out


def _renamable(func: ast.FunctionDef) -> bool:
    for node in ast.walk(func):
        if node is not func and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                                                  ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars", "eval",
                                                                                               "exec"):
            return False
    return True


def _rename_locals(func: ast.FunctionDef, fresh) -> None:
    params = {a.arg for a in func.args.args + func.args.posonlyargs + func.args.kwonlyargs}
    params |= {a.arg for a in (func.args.vararg, func.args.kwarg) if a is not None}
    stored = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    stored |= {n.name for n in ast.walk(func) if isinstance(n, ast.ExceptHandler) and n.name}
    mapping = {name: fresh() for name in sorted(stored - params)}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.ExceptHandler) and node.name in mapping:
            node.name = mapping[node.name]


def _temp_returns(tree: ast.AST, fresh) -> None:
    """``return EXPR`` becomes ``T = EXPR; return T`` (outside generators' bare returns)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            new = []
            for stmt in block:
                if isinstance(stmt, ast.Return) and stmt.value is not None and not isinstance(stmt.value, ast.Name):
                    name = fresh()
                    new.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=stmt.value))
                    new.append(ast.Return(ast.Name(name, ast.Load())))
                else:
                    new.append(stmt)
            setattr(node, field, new)


def functions(source: str) -> dict[str, str]:
    """Qualified function name -> its normalized AST dump."""
    return {name: ast.dump(node, annotate_fields=False) for name, node in _function_nodes(ast.parse(source))}


def make_variants(source: str, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    plans = [dict(rename=True, temp_return=True, mirror="constants", swap_if=False, reorder=False, prefix="_v"),
             dict(rename=False, temp_return=True, mirror="", swap_if=True, reorder=True, prefix="_result"),
             dict(rename=True, temp_return=False, mirror="all", swap_if=True, reorder=True, prefix="tmp_")]
    variants = []
    for i, plan in enumerate(plans):
        tree = ast.parse(source)
        rewrite = _Rewrite(rng, **plan)
        tree = rewrite.visit(tree)
        if plan["temp_return"]:
            _temp_returns(tree, rewrite._fresh)
        if plan["reorder"]:
            tree.body = _reorder(tree.body, rng)
        ast.fix_missing_locations(tree)
        variants.append({"name": f"r{i + 1}", "source": ast.unparse(tree) + "\n"})
    # a function no rewrite reached (attribute assignments only, say) gets its statements' order
    # changed where they are independent, else a leading no-op, in the last variant
    before = functions(source)
    untouched = {f for f in before if all(functions(v["source"]).get(f) == before[f] for v in variants)}
    if untouched:
        tree = ast.parse(variants[-1]["source"])
        for qualname, func in _function_nodes(tree):
            if qualname in untouched:
                _shuffle_assignments(func)
                if ast.dump(func, annotate_fields=False) == before[qualname]:
                    at = 1 if ast.get_docstring(func) is not None else 0
                    func.body.insert(at, ast.Pass())
        ast.fix_missing_locations(tree)
        variants[-1]["source"] = ast.unparse(tree) + "\n"
    return variants


def _function_nodes(tree):
    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                yield prefix + child.name, child
                yield from walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
    yield from walk(tree, "")


def _shuffle_assignments(func: ast.FunctionDef) -> None:
    """Reverse runs of ``self.a = name`` statements whose values name no target of the run."""
    body, out, run = func.body, [], []
    for stmt in body + [None]:
        simple = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute)
                  and isinstance(stmt.value, (ast.Name, ast.Constant)))
        if simple and not any(isinstance(stmt.value, ast.Name) and stmt.value.id == r.targets[0].attr for r in run):
            run.append(stmt)
            continue
        out += list(reversed(run))
        run = [stmt] if simple else []
        if stmt is not None and not simple:
            out.append(stmt)
    func.body = out


# --------------------------------------------------------------------------- running the reference tests

def run_tests(module: str, source: str, tests: dict[str, str], timeout: float = 20.0, coverage: bool = False):
    """(outcome, coverage percent or None): "pass", "fail" or "timeout" of *tests* on *source*."""
    with tempfile.TemporaryDirectory() as tmp:
        buildlib.write(os.path.join(tmp, module), source)
        for rel, text in tests.items():
            buildlib.write(os.path.join(tmp, rel), text)
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "tests"]
        if coverage:
            cmd = [sys.executable, "-m", "coverage", "run", "--branch", f"--include={module}", *cmd[1:]]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": ""}
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", None
        percent = None
        if coverage and proc.returncode == 0:
            rep = subprocess.run([sys.executable, "-m", "coverage", "json", "-o", "cov.json"], cwd=tmp, env=env,
                                 capture_output=True)
            if rep.returncode == 0:
                with open(os.path.join(tmp, "cov.json")) as f:
                    percent = json.load(f)["totals"]["percent_covered"]
        return ("pass" if proc.returncode == 0 else "fail"), percent


def stub_test(mod: str) -> str:
    return (f'"""Tests for {mod}.py: replace this placeholder with tests of its behaviour."""\n\nimport {mod}\n\n\n'
            f"def test_module_imports():\n    assert {mod}.__name__ == \"{mod}\"\n")


def build_task(name: str) -> str:
    from agentenv.builtin.authoring.synthesis import mutants, schedule

    folder = os.path.join(HERE, name)
    mod = name
    module = f"{mod}.py"
    original = buildlib.read(os.path.join(folder, "workspace", module))
    test_rel = f"tests/test_{mod}.py"
    reference = {test_rel: buildlib.read(os.path.join(folder, "solution", test_rel))}
    stub = {test_rel: stub_test(mod)}
    log = [f"{name}:"]

    outcome, percent = run_tests(module, original, reference, coverage=True)
    if outcome != "pass" or percent is None or percent < 100.0:
        raise SystemExit(f"{name}: the reference tests must pass with 100% branch coverage ({outcome}, {percent})")
    variants = make_variants(original, SEED + sum(map(ord, name)))
    before = functions(original)
    unchanged = [f for f in before if all(functions(v["source"]).get(f) == before[f] for v in variants)]
    if unchanged:
        raise SystemExit(f"{name}: no variant rewrites {', '.join(unchanged)}; a fingerprint of it would pass the gate")
    for v in variants:
        if run_tests(module, v["source"], reference)[0] != "pass" or run_tests(module, v["source"], stub)[0] != "pass":
            raise SystemExit(f"{name}: variant {v['name']} does not behave like the module")

    found = schedule(mutants(original, module), SEED)
    cap = max(PER_FUNCTION, -(-MAX_MUTANTS // len(before)))  # a module of few functions still gets its mutants
    kept, per_function, dropped = [], {}, {"survives the reference tests": 0, "hangs": 0}
    for mutation, source in found:
        if len(kept) >= MAX_MUTANTS:
            break
        if per_function.get(mutation.function, 0) >= cap:
            continue
        outcome, _ = run_tests(module, source, reference, timeout=10.0)
        if outcome != "fail":
            dropped["hangs" if outcome == "timeout" else "survives the reference tests"] += 1
            continue
        if run_tests(module, source, stub, timeout=10.0)[0] != "pass":
            continue  # broken at import: any test kills it, it measures nothing
        per_function[mutation.function] = per_function.get(mutation.function, 0) + 1
        kept.append({"id": f"m{len(kept) + 1}", "operator": mutation.operator, "function": mutation.function,
                     "line": mutation.line, "description": mutation.description, "source": source})
    if len(kept) < 6:
        raise SystemExit(f"{name}: only {len(kept)} mutants kept; the score would be too coarse")
    log.append(f"  {len(variants)} variants, {len(kept)} mutants kept of {len(found)} "
               f"({', '.join(f'{n} {why}' for why, n in dropped.items())})")

    subjects = {"module": module, "command": COMMAND, "timeout_s": 30, "original": original, "variants": variants,
                "mutants": kept}
    buildlib.write(os.path.join(folder, "hidden", ".check", "subjects.json"), buildlib.dump(subjects))
    buildlib.write(os.path.join(folder, "workspace", test_rel), stub[test_rel])
    summary, difficulty = TASKS[name]
    description = (f"`{module}` implements {summary}. It is correct; it has no tests. Write pytest tests for it in "
                   f"`{test_rel}` (the tests import `{mod}`; run them with `python -m pytest -q tests`). "
                   "Your tests are run against the module as given, against hidden rewrites of it that behave exactly "
                   "the same, and against hidden mutants (copies with one small bug each). The reward is the share of "
                   "mutants your tests catch, and nothing unless every test passes on the module and on every rewrite: "
                   "test what it does, not how its source is written.")
    doc = {
        "task_id": f"testwriting.{name}",
        "version": 0,
        "description": description,
        "environment_config": {"runtime": "python3.11", "dependencies": DEPENDENCIES},
        "workspace": {"root": "/app", "directory": "workspace"},
        "hidden_files": {"directory": "hidden", "files": buildlib.check_files(HERE, ["mutation_check.py",
                                                                                       "coverage_check.py"])},
        "protected_paths": [module, ".check/**"],
        "execution_steps": [
            {"action": "overwrite_file", "path": f"/app/{test_rel}", "content": "<model_generated_code>"},
            buildlib.reward_step("mutation_check.py"),
            buildlib.reward_step("coverage_check.py"),
        ],
        "reward_logic": {"type": "composite", "rules": [
            {"metric": "report_score", "weight": 1.0, "aggregation": "first"},
            {"metric": "report_score", "weight": 0.0, "aggregation": "last"}]},
        "limits": {"wall_time_s": 240, "memory_mb": 1024},
        "max_rounds": 30,
        "reference_solution": {"directory": "solution"},
        "tags": ["testwriting", "mutation-testing", "pytest"],
        "difficulty": difficulty,
        "expected_duration_s": 12.0,
        "metadata": {"generator": "tasks/testwriting/build.py", "seed": SEED, "module": module,
                     "mutants": len(kept), "variants": len(variants),
                     "rules": {"0": "mutation score (the reward)", "1": "branch coverage (coverage.py), weight 0"}},
    }
    buildlib.write(os.path.join(folder, "task.json"), buildlib.dump(doc))
    return "\n".join(log)


def main(argv: list[str]) -> int:
    done = buildlib.maintenance(HERE, argv)
    if done is not None:
        return done
    names = [a for a in argv if not a.startswith("-")] or list(TASKS)
    with ProcessPoolExecutor(2) as pool:
        for text in pool.map(build_task, names):
            print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
