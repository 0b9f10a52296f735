"""Task quality audit (a plugin in form): the ``agentenv audit`` subcommand.

``checks.py`` runs each check on a task through the environment, exactly as a policy meets it;
``probes.py`` holds the reward-hacking corpus; ``report.py`` what an audit found; ``clean.py``
writes a suite without the rejected tasks. The package imports only ``agentenv``'s public API.
"""

from __future__ import annotations

import json
import os
import sys
import time

import agentenv
from agentenv import AuditError, visible

from .checks import audit_paths, collect_tasks
from .clean import write_clean
from .report import AuditConfig


def _configure(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="task files, directories (a suite.json, or searched for task files) or installed suite names")
    p.add_argument("--runs", type=int, default=5, metavar="N", help="identical runs of the reference (default 5)")
    p.add_argument("--workers", type=int, default=1, metavar="W", help="tasks audited in parallel (threads)")
    p.add_argument("--json", default=None, metavar="FILE",
                   help="write the report (schemas/audit.schema.json) to FILE ('-': stdout)")
    p.add_argument("--write-clean", default=None, metavar="DIR",
                   help="write a suite without the rejected tasks, quarantines applied, to the new directory DIR")
    p.add_argument("--quarantine", action="store_true",
                   help="flaky tests warn instead of reject; --write-clean deselects them")
    p.add_argument("--fix-durations", action="store_true",
                   help="with --write-clean: set expected_duration_s to the measured median")
    p.add_argument("--strict", action="store_true", help="harness-level hacks reject tasks too")
    p.add_argument("--tolerance", type=float, default=0.1,
                   help="allowed spread of a timing rule's score between runs (default 0.1)")
    p.add_argument("--margin", type=float, default=2.0,
                   help="required headroom: limit >= margin * p95 of the reference (default 2)")
    p.add_argument("--backend", default="auto")


class _Progress:
    """A progress bar on stderr (a line per task when stderr is not a terminal)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self.finished = 0

    def update(self, done: int, total: int, label: str) -> None:
        if not self.tty:
            return
        width = 30
        filled = int(width * done / total) if total else width
        elapsed = time.monotonic() - self.start
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes "
                          f"{elapsed:5.0f}s  {label[:40]:<40}")
        self.stream.flush()

    def task_done(self, audit, total_tasks: int) -> None:
        self.finished += 1
        line = (f"audit {self.finished}/{total_tasks}: {audit.task_id or audit.path} {audit.verdict} "
                f"({audit.seconds:.1f} s)")
        if self.tty:
            self.stream.write("\r" + " " * 110 + "\r" + line + "\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()


def render_table(report) -> str:
    rows = []
    for t in report.tasks:
        m = t.measured.get("command_ms") or {}
        ep = t.measured.get("episode_s") or {}
        why = t.reasons[0] if t.reasons else ""
        rows.append((t.task_id or os.path.relpath(t.path), t.verdict.upper(),
                     f"{ep['p50']:.2f}" if ep else "-", f"{m['p95']:.0f}" if m else "-", why))
    width = max([len(r[0]) for r in rows] + [4])
    out = [f"{'TASK':<{width}}  {'VERDICT':<7}  {'EP p50 s':>8}  {'CMD p95 ms':>10}  FIRST REASON"]
    for name, verdict, ep, cmd, why in rows:
        out.append(f"{name:<{width}}  {verdict:<7}  {ep:>8}  {cmd:>10}  {why[:120]}")
    counts = report.counts()
    out.append(f"{len(report.tasks)} task(s): {counts['ok']} ok, {counts['warn']} warn, {counts['reject']} reject "
               f"in {report.seconds:.1f} s ({report.config.runs} reference runs each, {report.workers} worker(s))")
    for t in report.tasks:
        if t.verdict == "ok":
            continue
        out.append(f"\n{t.task_id or t.path}: {t.verdict}")
        out += [f"  - {r}" for r in t.reasons]
        flaky = [row for row in t.stability if row["flaky"]]
        if flaky:
            out.append("    stability (per run):")
            out += [f"      {row['test']}: {' '.join(row['outcomes'])}" for row in flaky]
    return "\n".join(out)


def _run(args) -> int:

    if args.fix_durations and not args.write_clean:
        raise AuditError("--fix-durations rewrites the cleaned copy: add --write-clean DIR")
    if args.write_clean and os.path.exists(args.write_clean) and (
            not os.path.isdir(args.write_clean) or os.listdir(args.write_clean)):
        raise AuditError(f"--write-clean {args.write_clean}: the directory exists and is not empty; "
                         "choose a new directory")
    config = AuditConfig(runs=args.runs, quarantine=args.quarantine, strict=args.strict, tolerance=args.tolerance,
                         margin=args.margin, backend=args.backend)
    total_tasks = len(collect_tasks(args.paths))
    progress = _Progress()
    try:
        report = audit_paths(args.paths, config, workers=args.workers, progress=progress.update,
                             on_task=lambda a: progress.task_done(a, total_tasks))
    finally:
        progress.close()
    print(visible(render_table(report)))  # (task ids, reasons and test ids are the tasks')
    if args.json:
        text = json.dumps(report.to_json(), indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
            print(f"wrote {args.json}")
    if args.write_clean:
        files = write_clean(report, args.write_clean, fix_durations=args.fix_durations)
        print(f"wrote {args.write_clean}: {len(files)} task(s)")
    status = report.exit_status
    if status == 3:
        print("some checks hit an infrastructure failure (not the tasks' fault); rerun the audit",
              file=sys.stderr)
    return status


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("audit", "audit task quality by repeated execution: flaky, trivial, unsolvable, "
                         "hackable, over-budget and leaky tasks", _configure, _run)
