"""Evaluation, calibration and leaderboards: the ``eval``, ``calibrate`` and ``leaderboard`` subcommands
(a plugin in form).

``run.py`` runs an agent over a suite (``agentenv eval``), ``calibrate.py`` turns such a run into
per-task pass rates and difficulty bands, ``leaderboard.py`` ranks the results; this module
registers their commands. The package imports only ``agentenv``'s public API, so it
could leave the wheel as a distribution of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import agentenv
from agentenv import AGENTIC, SINGLE_SHOT

from . import calibrate
from .leaderboard import build_board, load_results, render_html, render_markdown, render_text
from .run import EvalConfig, first_task, run_eval, task_mode


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 1,5,10, not {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one k, e.g. -k 1")
    return values


def _metrics(text: str) -> str | tuple[str, ...]:
    if text in ("reward", "all"):
        return text
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    known = agentenv.registry().metrics
    for name in names:
        if name not in known:
            raise argparse.ArgumentTypeError(f"no installed plugin measures {name!r}; known: reward, all, "
                                             f"{', '.join(sorted(known))}")
    if not names:
        raise argparse.ArgumentTypeError("expected reward, all or metric names such as lint_findings")
    return names


def _eval_configure(p) -> None:
    p.add_argument("--suite", required=True, help="an installed suite name (examples, pybugs) or a suite directory")
    p.add_argument("--agent", required=True, help="agent NAME[:ARG]; installed: " + ", ".join(
        sorted(agentenv.registry().agents)) + " (agentenv run --help says what each takes)")
    p.add_argument("--samples", "-n", type=int, default=1, help="episodes per task")
    p.add_argument("-k", type=_ints, default=None, metavar="K[,K...]",
                   help="pass@k to report (default: 1, plus the number of samples when more)")
    p.add_argument("--workers", "-w", type=int, default=None,
                   help="concurrent episodes (default: the executor's, local: one per CPU core this process may "
                        "use; ray: one per CPU of the cluster)")
    p.add_argument("--executor", default="local",
                   help="where episodes run: local (threads, default), ray (agentenv-ray); `agentenv plugins` lists them")
    p.add_argument("--address", default=None, metavar="ADDR", help="the executor's cluster (ray: ray://host:port or "
                                                                    "auto); default: a local one")
    p.add_argument("--no-lanes", dest="lanes", action="store_false",
                   help="first come, first served instead of lanes by predicted duration")
    p.add_argument("--backend", default="auto", help="sandbox backend")
    p.add_argument("--mode", default=None, choices=[SINGLE_SHOT, AGENTIC],
                   help="default: single_shot when the task has a placeholder, else agentic")
    p.add_argument("--reward-mode", default="terminal", choices=["terminal", "dense"],
                   help="terminal: the score at the end; dense: its change after every step")
    p.add_argument("--tasks", default="", metavar="GLOB[,GLOB...]", help="only the tasks whose id matches (default: all)")
    p.add_argument("--retries", type=int, default=2, help="retries of an episode hit by an infrastructure failure")
    p.add_argument("--seed", type=int, default=0, help="base seed; each (task, sample) derives its own")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default: out/eval-SUITE-AGENT)")
    p.add_argument("--resume", action="store_true", help="continue the run in DIR: redo only the missing episodes")
    p.add_argument("--metrics", type=_metrics, default="reward", metavar="reward|all|NAME[,NAME...]",
                   help="what episodes measure for their records besides what the reward reads: reward "
                        "(default: no on-demand metric, such as lint, unless the task's reward names it), "
                        "all, or metric names")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress line")


def _default_out(suite: str, agent: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in f"{suite}-{agent}")[:80]
    return os.path.join("out", f"eval-{safe}")


def _eval_run(args) -> int:
    suite = agentenv.find_suite(args.suite)
    ks = args.k or ((1,) if args.samples == 1 else (1, args.samples))
    config = EvalConfig(suite=suite, agent=args.agent, out=args.out or _default_out(suite.name, args.agent),
                        samples=args.samples, ks=tuple(sorted(set(ks))), workers=args.workers,
                        backend=args.backend, mode=args.mode, reward_mode=args.reward_mode, retries=args.retries,
                        seed=args.seed, tasks=tuple(p for p in args.tasks.split(",") if p),
                        resume=args.resume, progress=not args.quiet, executor=args.executor,
                        address=args.address, lanes=args.lanes, metrics=args.metrics)
    # A bad agent spec is a usage error: say so before any sandbox starts, on a task the run plays.
    first = first_task(suite, config.tasks)
    agent = agentenv.make_agent(args.agent, first, task_mode(first, args.mode))
    if hasattr(agent, "close"):
        agent.close()
    outcome = run_eval(config)
    overall = outcome.results["overall"]
    passes = "  ".join(f"pass@{k}={v:.3f}" if v is not None else f"pass@{k}=n/a"
                       for k, v in overall["pass_at_k"].items())
    fails = ", ".join(f"{c} {n}" for c, n in overall["failures"].items() if n) or "none"
    print(f"{agentenv.visible(suite.name)} {agentenv.visible(suite.version)} agent={agentenv.visible(args.agent)}: {overall['tasks']} tasks x {args.samples} samples; "
          f"{passes}  mean reward={_fmt(overall['mean_reward'])}  mean rounds={_fmt(overall['mean_rounds'])}")
    print(f"failures: {fails}")
    print(f"wrote {outcome.paths['results']} and {outcome.paths['trajectories']} ({outcome.episodes_run} episode(s) run now)")
    if outcome.interrupted:
        print(f"interrupted: rerun the same command with --resume --out {config.out}", file=sys.stderr)
        return 130
    return 0


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _leaderboard_configure(p) -> None:
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results.json files (or folders holding one)")
    p.add_argument("--metric", default="pass@1", help="headline metric: pass@K, mean_reward, mean_score or success_rate")
    p.add_argument("--html", default=None, metavar="FILE", help="write a self-contained HTML page")
    p.add_argument("--markdown", default=None, metavar="FILE", help="write a Markdown table")
    p.add_argument("--json", action="store_true", help="print the ranking as JSON")


def _leaderboard_run(args) -> int:
    runs = load_results(args.results)
    board = build_board(runs, args.metric)
    if args.json:
        print(json.dumps(board, indent=1))
    else:
        print(agentenv.visible(render_text(board)))  # (names come from the results files)
    for path, render in ((args.markdown, render_markdown), (args.html, render_html)):
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(render(board))
            print(f"wrote {path}", file=sys.stderr)
    return 0


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("eval", "run an agent over a suite (N samples per task, W workers); write results.json",
                         _eval_configure, _eval_run)
    registry.add_command("calibrate", "measure each task's pass rate (Wilson interval, difficulty band) for an agent; "
                         "write the suite's calibration.json", calibrate.configure, calibrate.run)
    registry.add_command("leaderboard", "rank results.json files of one suite version; Markdown and HTML reports",
                         _leaderboard_configure, _leaderboard_run)
