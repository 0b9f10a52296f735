"""The cleaned suite: every task the audit did not reject, with its flaky tests quarantined."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any, Iterable

import agentenv
from agentenv import AuditError

from .report import AuditReport, TaskAudit

# --------------------------------------------------------------------------- the cleaned suite

def _deselect(node: str, files: Iterable[str]) -> str:
    """A pytest node id for ``--deselect``: JSON-report ids already are; a JUnit id
    (``pkg.test_mod::Class::name``) is mapped back onto one of the task's test files."""
    path, sep, rest = node.partition("::")
    if path.endswith(".py") or not sep:
        return node
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if any(f == candidate or f.endswith("/" + candidate) for f in files):
            return "::".join([candidate, *parts[cut:], rest])
    return node


def clean_document(doc: dict[str, Any], audit: TaskAudit, task_files: Iterable[str],
                   fix_durations: bool = False) -> dict[str, Any]:
    """The task document with the audit's quarantines applied (and the measured duration)."""
    doc = json.loads(json.dumps(doc))
    if audit.quarantined:
        files = list(task_files)
        commands = [i for i, s in enumerate(doc["execution_steps"]) if s.get("action") == "run_command"]
        for q in audit.quarantined:
            if q["command"] >= len(commands):
                continue
            step = doc["execution_steps"][commands[q["command"]]]
            node = _deselect(q["test"], files)
            fmt = agentenv.registry().report_format_for(step["command"])
            step["command"] = (fmt and fmt.deselect(step["command"], [node])) or step["command"]
        meta = doc.setdefault("metadata", {})
        meta["quarantined"] = sorted({*meta.get("quarantined", []), *(q["test"] for q in audit.quarantined)})
    if fix_durations and audit.suggested_expected_duration_s is not None:
        doc["expected_duration_s"] = audit.suggested_expected_duration_s
    return doc


def write_clean(report: AuditReport, dest: str, fix_durations: bool = False) -> list[str]:
    """Write a suite to *dest*: every task not rejected, quarantines applied; returns the task files."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise AuditError(f"--write-clean {dest}: the directory exists and is not empty; choose a new directory")
    kept = [t for t in report.tasks if t.verdict != "reject" and t.task_id]
    os.makedirs(dest, exist_ok=True)
    written = []
    for audit in kept:
        src_dir = os.path.dirname(os.path.abspath(audit.path))
        doc = json.load(open(audit.path))
        out_dir = os.path.join(dest, audit.task_id)
        os.makedirs(out_dir)
        task_files = []
        for key in ("workspace", "hidden_files", "reference_solution"):
            section = doc.get(key) or {}
            rel = section.get("directory")
            if not rel:
                continue
            target = os.path.normpath(rel)
            if target.startswith("..") or os.path.isabs(target):
                target = key  # outside the task's directory: bring it in
                section["directory"] = key
            shutil.copytree(os.path.join(src_dir, rel), os.path.join(out_dir, target), dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
            if key != "reference_solution":
                for root, _, names in os.walk(os.path.join(out_dir, target)):
                    task_files += [os.path.relpath(os.path.join(root, n), os.path.join(out_dir, target)) for n in names]
        for key in ("workspace", "hidden_files"):
            task_files += list((doc.get(key) or {}).get("files", {}))
        cleaned = clean_document(doc, audit, task_files, fix_durations)
        file = os.path.join(out_dir, "task.json")
        with open(file, "w") as f:
            json.dump(cleaned, f, indent=2)
            f.write("\n")
        written.append(file)
    suites = sorted({t.suite for t in report.tasks if t.suite})
    rejected = [t.task_id or t.path for t in report.tasks if t.verdict == "reject"]
    suite_doc = {"name": suites[0] if len(suites) == 1 else "audited", "version": "1.0.0",
                 "description": f"audited by agentenv audit: {len(kept)} task(s) kept, {len(rejected)} rejected "
                                f"and removed" + (f" ({', '.join(rejected)})" if rejected else ""),
                 "tasks": ["*/task.json"]}
    with open(os.path.join(dest, "suite.json"), "w") as f:
        json.dump(suite_doc, f, indent=2)
        f.write("\n")
    return written


