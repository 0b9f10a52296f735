"""Authoring task suites (a plugin in form): ``agentenv import humaneval|harbor``, ``agentenv export``
and ``agentenv synthesize``.

``humaneval.py`` imports HumanEval-format problem files; ``harbor.py`` converts Harbor task folders
in and out; ``synthesis.py`` makes repair tasks by mutating a pinned package's source. The package
imports only ``agentenv``'s public API.
"""

from __future__ import annotations

import os
import sys

import agentenv

from .harbor import export_tasks, import_harbor
from .humaneval import import_humaneval
from .synthesis import synthesize



def _import_configure(p) -> None:
    formats = p.add_subparsers(dest="format", metavar="FORMAT", required=True)
    he = formats.add_parser("humaneval", help="HumanEval-format problems (task_id, prompt, canonical_solution, "
                                              "test, entry_point), one JSON object a line, .jsonl or .jsonl.gz")
    he.add_argument("file", metavar="FILE", help="the problem file (.jsonl or .jsonl.gz)")
    he.add_argument("--out", required=True, metavar="DIR", help="the suite directory to write, e.g. tasks/humaneval")
    he.add_argument("--name", default=None, help="suite name and task-id prefix (default: the --out folder's name)")
    he.add_argument("--timeout", type=float, default=3.0, metavar="S",
                    help="per-problem time limit, as in the format's harness (default 3.0)")
    he.add_argument("--runtime", default="python3.11", help="the tasks' runtime (default python3.11)")
    hb = formats.add_parser("harbor", help="Harbor task folders: one (with task.toml) or a folder of them")
    hb.add_argument("file", metavar="DIR", help="a Harbor task folder, or a dataset folder holding task folders")
    hb.add_argument("--out", required=True, metavar="DIR", help="the suite directory to write, e.g. tasks/tbench")
    hb.add_argument("--name", default=None, help="suite name and task-id prefix (default: the --out folder's name)")
    hb.add_argument("--no-oracle", action="store_true",
                    help="do not run solution/solve.sh to derive the reference (and do not check the conversion)")
    hb.add_argument("--backend", default="auto")


def _import_run(args) -> int:
    if args.format == "harbor":
        return _import_harbor(args)

    def progress(i, n, path):
        if i == n or i % 50 == 0:
            print(f"  {i}/{n} tasks written", file=sys.stderr, flush=True)

    report = import_humaneval(args.file, args.out, suite=args.name, timeout_s=args.timeout, runtime=args.runtime,
                              progress=progress)
    for bad in report.bad:
        print(f"bad record: {agentenv.visible(bad)}", file=sys.stderr)
    print(f"imported {len(report.written)} task(s) into {os.path.relpath(args.out)} "
          f"({report.suite_file and os.path.relpath(report.suite_file)}); {len(report.bad)} bad record(s) skipped")
    return 1 if report.bad else 0


def _import_harbor(args) -> int:
    def say(message):
        print(agentenv.visible(message), file=sys.stderr, flush=True)

    report = import_harbor(args.file, args.out, suite=args.name, run_oracle=not args.no_oracle, backend=args.backend,
                           progress=say)
    for task_dir, why in report.refused:
        print(agentenv.visible(f"refused {task_dir}: {why}"))
    print(f"imported {len(report.written)} Harbor task(s) into {os.path.relpath(args.out)}; "
          f"{len(report.refused)} refused")
    return 1 if report.refused or not report.written else 0


def _harbor_configure(group) -> None:
    """``agentenv export SOURCE --format harbor --out DIR``: SOURCE a task file, a suite folder or an
    installed suite's name; DIR the folder of task folders to write. No options of its own."""


def _harbor_run(args) -> int:
    def say(message):
        print(agentenv.visible(message), file=sys.stderr, flush=True)

    if not args.out:
        raise agentenv.ToolError("agentenv export --format harbor needs --out DIR: the folder of Harbor task folders "
                                 "to write")
    written, refused = export_tasks(args.source, args.out, say)
    for why in refused:
        print(agentenv.visible(f"refused {why}"))
    print(f"exported {len(written)} task(s) to {os.path.relpath(args.out)} as {args.format}; {len(refused)} refused")
    return 1 if refused or not written else 0


def _synth_configure(p) -> None:
    p.add_argument("requirement", metavar="NAME==VERSION", help="the package, pinned, e.g. inflection==0.5.1")
    p.add_argument("--out", required=True, metavar="DIR", help="the suite directory to write")
    p.add_argument("--name", default=None, help="suite name and task-id prefix (default: the --out folder's name)")
    p.add_argument("--max-tasks", type=int, default=15, help="stop after this many kept mutants (default 15)")
    p.add_argument("--max-attempts", type=int, default=200, help="mutants to evaluate at most (default 200)")
    p.add_argument("--per-function", type=int, default=1, help="kept mutants per function at most (default 1)")
    p.add_argument("--seed", type=int, default=0, help="order in which mutants are tried (default 0)")
    p.add_argument("--module", action="append", default=None, metavar="PATH",
                   help="module to mutate, relative to the sdist root (repeatable; default: every package module)")
    p.add_argument("--tests", action="append", default=None, metavar="PATH",
                   help="test file or directory to score with (repeatable; default: found in the sdist)")
    p.add_argument("--backend", default="auto")


def _synth_run(args) -> int:
    def say(message):
        print(agentenv.visible(message), file=sys.stderr, flush=True)

    report = synthesize(args.requirement, args.out, suite=args.name, max_tasks=args.max_tasks, seed=args.seed,
                        modules=args.module, tests=args.tests, per_function=args.per_function,
                        max_attempts=args.max_attempts, backend=args.backend, progress=say)
    discarded = ", ".join(f"{n} {why}" for why, n in sorted((report.discarded or {}).items())) or "none"
    print(f"{report.kept} task(s) written to {os.path.relpath(args.out)} from {report.tried} mutant(s) tried "
          f"of {report.candidates}; discarded: {discarded}")
    return 0 if report.kept else 1


@agentenv.hookimpl
def agentenv_add_exporters(registry) -> None:
    registry.add_exporter("harbor", "Harbor task folders (task.toml, instruction.md, environment/, tests/test.sh, "
                                    "solution/solve.sh)", _harbor_configure, _harbor_run)


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("import", "import a problem set as a task suite (formats: humaneval, harbor)",
                         _import_configure, _import_run)
    registry.add_command("synthesize", "generate repair tasks by mutating a real package's source; its own tests score",
                         _synth_configure, _synth_run)
