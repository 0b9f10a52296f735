"""What the build scripts of the testwriting, logs and ops suites share: writing a task document whose
hidden check programs are inlined from one source, and checking that the committed tasks are current.

Tasks are data: the check programs run inside the sandbox, never in agentenv. A task folder may not
reach outside itself (links are refused), so each task carries its own copy of the check code as
inline ``hidden_files``; ``build.py --check`` (and ``tests/test_new_suites.py``) fail when a copy is
stale, naming the command that rewrites it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Iterable

HARNESS = os.path.dirname(os.path.abspath(__file__))
GUARD = os.path.join(HARNESS, "guard.py")
PYTHON_DEPS = ["pytest==8.3.5"]


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_files(suite_dir: str, programs: Iterable[str]) -> dict[str, str]:
    """``.check/<name>`` -> source, for the guard and the suite's check programs (``_check/<name>``)."""
    files = {".check/guard.py": read(GUARD)}
    for name in programs:
        files[f".check/{name}"] = read(os.path.join(suite_dir, "_check", name))
    return files


def reward_step(program: str) -> dict[str, Any]:
    # exec: no shell stays behind as the check's parent. A shell is dumpable and holds the step's
    # output, so code under test could write lines of its own into the check's transcript
    # through /proc/<shell>/fd/1; the guard (non-dumpable) is then the only holder.
    return {"action": "run_command", "command": f"exec python -I /app/.check/{program}",
            "report": {"format": "reward_file"}}


def _check_steps(doc: dict) -> list[tuple[dict, str]]:
    """(step, program) of every step of *doc* that runs a check program of ``.check/``."""
    return [(step, step["command"].rsplit("/app/.check/", 1)[1]) for step in doc.get("execution_steps", [])
            if step.get("action") == "run_command" and "/app/.check/" in step.get("command", "")]


def dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def write(path: str, text: str | bytes, mode: int | None = None) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)


def _task_docs(suite_dir: str):
    """(path, document) of every ``NAME/task.json`` of a suite folder."""
    for name in sorted(os.listdir(suite_dir)):
        path = os.path.join(suite_dir, name, "task.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                yield path, json.load(f)


def stale_inline_files(suite_dir: str) -> list[str]:
    """Task files whose inlined check programs differ from their sources (empty when current)."""
    stale = []
    for path, doc in _task_docs(suite_dir):
        for rel, text in (doc.get("hidden_files") or {}).get("files", {}).items():
            source = GUARD if rel == ".check/guard.py" else os.path.join(suite_dir, "_check", rel.split("/", 1)[1])
            if not os.path.exists(source) or read(source) != text:
                stale.append(f"{os.path.relpath(path, suite_dir)}: {rel}")
        for step, program in _check_steps(doc):
            if step["command"] != reward_step(program)["command"]:
                stale.append(f"{os.path.relpath(path, suite_dir)}: the command {step['command']!r}")
    return stale


def refresh_inline(suite_dir: str) -> list[str]:
    """Rewrite only the inlined check programs of every task and the commands that run them (no other
    rebuilding)."""
    written = []
    for path, doc in _task_docs(suite_dir):
        files = (doc.get("hidden_files") or {}).get("files", {})
        programs = [rel.split("/", 1)[1] for rel in files if rel != ".check/guard.py"]
        doc["hidden_files"]["files"] = check_files(suite_dir, programs)
        for step, program in _check_steps(doc):
            step["command"] = reward_step(program)["command"]
        write(path, dump(doc))
        written.append(path)
    return written


def maintenance(suite_dir: str, argv: list[str]) -> int | None:
    """``--check`` and ``--inline-only``, the options every suite's build.py shares; None otherwise."""
    if "--check" in argv:
        stale = stale_inline_files(suite_dir)
        for line in stale:
            print(f"stale: {line}", file=sys.stderr)
        if stale:
            print(f"rewrite with: python {os.path.relpath(os.path.join(suite_dir, 'build.py'))} --inline-only",
                  file=sys.stderr)
        return 1 if stale else 0
    if "--inline-only" in argv:
        for path in refresh_inline(suite_dir):
            print(f"wrote {os.path.relpath(path)}")
        return 0
    return None
