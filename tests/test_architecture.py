"""The layout holds: one direction through the kernel, built-ins and tools on the public API only,
and a public surface guarded the way httpx guards its own (docs/architecture.md draws it)."""

import ast
import glob
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import types

import pytest

import agentenv
import agentenv.builtin
from agentenv import hookspecs

pytestmark = pytest.mark.unit

PACKAGE = os.path.dirname(os.path.abspath(agentenv.__file__))
ROOT = os.path.dirname(PACKAGE)

#: the kernel, bottom first: a module may import only modules listed before it
KERNEL = ("_sandbox_server", "_errors", "_paths", "_scheduler", "_concurrency", "_sources", "_spec", "_sandbox", "_workspace",
          "_extension", "hookspecs", "_plugins", "_schema", "_suites", "_reward", "_curriculum", "_trajectory",
          "_backends", "_scoring", "_env", "_chat", "_async", "_episode", "_registration", "_rollout", "_cli", "wrappers",
          "testing", "__init__", "__main__")
#: built-in packages that are tools built on the environments: each could leave as its own distribution
TOOLS = ("eval", "audit", "authoring", "llm")
#: the public modules besides the package itself
PUBLIC_MODULES = ("hookspecs", "testing", "wrappers")


def _imports(path: str, package: str):
    """(imported module, function-local?, TYPE_CHECKING-only?) of every agentenv import in *path*."""
    tree = ast.parse(open(path).read())
    local, typing_only = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                targets = [".".join(base + ([node.module] if node.module else []))]
                if not node.module:  # from . import x: x may be a module
                    targets = [".".join(base + [a.name]) for a in node.names]
            else:
                targets = [node.module]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            if target and target.split(".")[0] == "agentenv":
                yield target, id(node) in local, id(node) in typing_only


def _kernel_module(name: str) -> str:
    return os.path.join(PACKAGE, f"{name}.py")


def test_the_kernel_is_stacked_in_one_direction():
    assert sorted(KERNEL) == sorted(m[:-3] for m in os.listdir(PACKAGE) if m.endswith(".py")), \
        "a kernel module was added or removed: place it in KERNEL (and in docs/architecture.md)"
    problems = []
    for i, name in enumerate(KERNEL):
        for target, local, typing_only in _imports(_kernel_module(name), "agentenv"):
            if typing_only:
                continue
            parts = target.split(".")
            if len(parts) > 1 and parts[1] == "builtin":
                problems.append(f"{name} imports {target}: the kernel never imports the built-in plugins")
                continue
            if local:
                problems.append(f"{name} imports {target} inside a function: it lives in the wrong room")
            dep = parts[1] if len(parts) > 1 else "__init__"
            if dep in KERNEL and KERNEL.index(dep) >= i and dep != name:
                problems.append(f"{name} imports {dep}, which is above it")
    assert not problems, "\n".join(problems)


#: built-in files that agentenv never imports: programs that run inside a sandbox (standard library only)
SANDBOX_PROGRAMS = ("agentenv.builtin._nszygote", "agentenv.builtin._nswarm", "agentenv.builtin._pytest_judge")


def _builtin_modules():
    for info in pkgutil.walk_packages(agentenv.builtin.__path__, "agentenv.builtin."):
        if info.name in SANDBOX_PROGRAMS:
            continue
        module = importlib.import_module(info.name)
        package = info.name if info.ispkg else info.name.rpartition(".")[0]
        yield info.name, module.__file__, package


def test_builtins_use_only_the_public_api_and_tools_only_their_own_package():
    problems = []
    for name, path, package in _builtin_modules():
        tool = next((t for t in TOOLS if name == f"agentenv.builtin.{t}" or name.startswith(f"agentenv.builtin.{t}.")), None)
        for target, _, _ in _imports(path, package):
            if target == "agentenv" or target in {f"agentenv.{m}" for m in PUBLIC_MODULES}:
                continue
            if target.startswith("agentenv.builtin."):
                if tool and not target.startswith(f"agentenv.builtin.{tool}"):
                    problems.append(f"{name} imports {target}: a tool imports only agentenv and its own package")
                continue
            problems.append(f"{name} imports {target}: built-ins import only agentenv's public API (and its public "
                            f"modules {', '.join(PUBLIC_MODULES)})")
    assert not problems, "\n".join(problems)


def test_all_is_sorted_and_is_every_public_name():
    assert agentenv.__all__ == sorted(agentenv.__all__)
    public = {n for n, v in vars(agentenv).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(agentenv.__all__), f"leaks: {public - set(agentenv.__all__)}; " \
                                            f"missing: {set(agentenv.__all__) - public}"
    modules = {m[:-3] for m in os.listdir(PACKAGE) if m.endswith(".py") and not m.startswith("_")}
    assert modules == set(PUBLIC_MODULES), "a module without a leading underscore is public: name it _x or list it"


def _error_classes():
    for name, _, _ in _builtin_modules():
        pass  # every built-in imported: their errors are defined by now
    seen, stack = set(), [agentenv.AgentEnvError]
    while stack:
        cls = stack.pop()
        if cls not in seen:
            seen.add(cls)
            stack.extend(cls.__subclasses__())
    return {c for c in seen if c.__module__ == "agentenv" or c.__module__.startswith("agentenv.")}


def test_every_error_is_exported_and_drawn_in_the_tree():
    tree = inspect.getdoc(importlib.import_module("agentenv._errors"))
    for cls in _error_classes():
        assert cls.__name__ in agentenv.__all__, f"{cls.__module__}.{cls.__name__} is not exported"
        assert cls.__module__ == "agentenv._errors", f"{cls.__name__} is defined outside the error module"
        assert re.search(rf"\b{cls.__name__}\b", tree), f"{cls.__name__} is missing from the drawn tree"
        drawn_parent = None
        for line in tree.splitlines():
            if re.search(rf"[─ ]{cls.__name__}\b", line) or line.strip() == cls.__name__:
                drawn_parent = line
        assert drawn_parent is not None


def test_the_version_is_written_once():
    assert re.fullmatch(r"\d+\.\d+\.\d+", agentenv.__version__)
    pyproject = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M) and not re.search(r"^version\s*=", pyproject, re.M)
    hits = [p for p in _package_files() if re.search(r"^__version__\s*=", open(p).read(), re.M)]
    assert hits == [os.path.join(PACKAGE, "__init__.py")]


def _package_files():
    for root, _, files in os.walk(PACKAGE):
        yield from (os.path.join(root, f) for f in files if f.endswith(".py"))


def test_public_classes_and_functions_carry_docstrings():
    missing = [n for n in agentenv.__all__ if (inspect.isclass(getattr(agentenv, n)) or inspect.isfunction(getattr(agentenv, n)))
               and not (inspect.getdoc(getattr(agentenv, n)) or "").strip()]
    assert not missing, f"no docstring: {missing}"


def test_modes_are_named_constants_not_bare_strings():
    offenders = []
    for path in _package_files():
        if path.endswith(("_spec.py", "_nszygote.py", "_nswarm.py", "_pytest_judge.py", "_sandbox_server.py")):
            continue
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Compare) and any(isinstance(c, ast.Constant) and c.value in ("single_shot", "agentic")
                                                     for c in [node.left, *node.comparators]):
                offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert not offenders, "compare modes with agentenv.SINGLE_SHOT / AGENTIC: " + ", ".join(offenders)


def test_every_hook_has_a_section_in_the_plugin_guide():
    guide = open(os.path.join(ROOT, "docs", "plugins.md")).read()
    for name in (n for n in dir(hookspecs) if n.startswith("agentenv_add_")):
        assert f"`{name}`" in guide, f"docs/plugins.md has no example of {name}"


def test_scripts_beside_the_package_import_what_exists():
    # a module move once left bench/bench_perf.py importing agentenv._bench, so `make bench` died at its
    # first line; every agentenv name the scripts import must still be where they look for it
    missing = []
    for folder in ("bench", "examples", "scripts"):
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "**", "*.py"), recursive=True)):
            for node in ast.walk(ast.parse(open(path).read())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "agentenv":
                    try:
                        module = importlib.import_module(node.module)
                    except ImportError as exc:
                        missing.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {exc}")
                        continue
                    missing += [f"{os.path.relpath(path, ROOT)}:{node.lineno}: {node.module} has no {a.name}"
                                for a in node.names if a.name != "*" and not hasattr(module, a.name)
                                and importlib.util.find_spec(f"{node.module}.{a.name}") is None]
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name.split(".")[0] == "agentenv" and importlib.util.find_spec(alias.name) is None:
                            missing.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: no module {alias.name}")
    assert not missing
