"""Core subcommands: list, validate, schema, run, demo, plugins, bench."""

from __future__ import annotations

import json
import os
import sys
import time

import gymnasium as gym

import agentenv
from agentenv import AGENTIC, SINGLE_SHOT, TaskSpecError, UnknownNameError, visible


def _list_configure(p) -> None:
    p.add_argument("--json", action="store_true", help="one JSON array of {env_id, task_id, suite, path}")


def _list_run(args) -> int:
    rows = []
    for suite in agentenv.installed_suites().values():
        for path in suite.task_files:
            try:
                with open(path) as f:
                    doc = json.load(f)
                task_id, version = str(doc["task_id"]), int(doc.get("version", 0))
            except (OSError, ValueError, KeyError, TypeError):
                task_id, version = "?", 0
            rows.append({"env_id": f"agentenv/{task_id}-v{version}", "task_id": task_id,
                         "suite": suite.name, "path": path})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    table = [("TASK ID", "SUITE", "ENV ID", "PATH")] + [
        (visible(r["task_id"]), visible(r["suite"]), visible(r["env_id"]), visible(os.path.relpath(r["path"])))
        for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    print(f"{len(rows)} task(s)")
    return 0


def _validate_configure(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="task files or directories (searched for *.json)")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too (an ungated speed rule, an "
                   "unreachable success, a runtime this host lacks)")


def _validate_run(args) -> int:
    bad = warned = 0
    files = agentenv.task_files(args.paths)
    for path in files:
        try:
            task = agentenv.load_task(path)
        except TaskSpecError as exc:
            bad += 1
            print(visible(exc), file=sys.stderr)
            continue
        warnings = agentenv.task_warnings(task)
        if warnings:
            warned += 1
            print(f"{visible(path)}: {len(warnings)} warning(s) (the task loads; fix them unless they are meant)",
                  file=sys.stderr)
            for warning in warnings:
                print(f"  - {visible(warning)}", file=sys.stderr)
    print(f"{len(files) - bad} valid, {bad} invalid" + (f", {warned} with warnings" if warned else ""))
    return 1 if bad or not files or (args.strict and warned) else 0


def _schema_configure(p) -> None:
    p.add_argument("--write", action="store_true", help="write schemas/task.schema.json (built-in plugins only)")
    p.add_argument("--check", action="store_true", help="exit 1 when schemas/ is stale")


def _schema_run(args) -> int:
    target = os.path.join(agentenv.bundled_dir("schemas"), "task.schema.json")
    registry = None  # None: the installed plugins; the checked-in file holds the built-in ones only
    if args.write or args.check:
        registry = agentenv.PluginManager(autoload=False).registry
    text = json.dumps(agentenv.task_schema(registry), indent=2, sort_keys=True) + "\n"
    if args.write:
        with open(target, "w") as f:
            f.write(text)
        print(f"wrote {target}")
        return 0
    if args.check:
        current = open(target).read() if os.path.exists(target) else ""
        if current != text:
            print(f"{target} is stale; regenerate it with: agentenv schema --write", file=sys.stderr)
            return 1
        print(f"{target} is up to date")
        return 0
    sys.stdout.write(text)
    return 0


def _agents_help() -> str:
    """The registered agents, for --agent's help (plugins' agents included)."""
    agents = agentenv.registry().agents
    return "agent NAME[:ARG], one of: " + ", ".join(
        f"{name} ({entry.help})" if entry.help else name for name, entry in sorted(agents.items()))


def _run_configure(p) -> None:
    p.add_argument("task", help="an env id (agentenv/x-v0), a task id, a task file, or a folder holding task.json")
    p.add_argument("--agent", default="reference", help=_agents_help())
    p.add_argument("--mode", default=None, choices=[SINGLE_SHOT, AGENTIC],
                   help="default: single_shot when the task has a placeholder, else agentic")
    p.add_argument("--reward-mode", default="terminal", choices=["terminal", "dense"],
                   help="terminal: the score at the end; dense: its change after every step")
    p.add_argument("--backend", default="auto", help="sandbox backend")
    p.add_argument("--seed", type=int, default=None, help="seed of the reset (and of a random agent)")
    p.add_argument("--json", action="store_true", help="print the trajectory and result as JSON")


def resolve_task_path(name: str) -> str:
    """A task file from a path (a folder holding ``task.json`` too), an env id (``agentenv/x-v0``)
    or a task id."""
    if os.path.isdir(name) and os.path.isfile(os.path.join(name, "task.json")):
        return os.path.join(name, "task.json")
    if os.path.exists(name):
        return name
    ids = agentenv.register_envs()
    for env_id, path in ids.items():
        if name in (env_id, env_id.split("/", 1)[1], env_id.split("/", 1)[1].rsplit("-v", 1)[0]):
            return path
    known = [i.split("/", 1)[1].rsplit("-v", 1)[0] for i in ids]
    if "/" in name or name.endswith(".json"):
        raise UnknownNameError("task", name, known, listing="no file of that name either; agentenv list shows the tasks")
    raise UnknownNameError("task", name, known, listing="agentenv list shows them")


def _run_run(args) -> int:
    task = agentenv.load_task(resolve_task_path(args.task))
    mode = args.mode or (SINGLE_SHOT if task.supports_single_shot else AGENTIC)
    records: list[dict] = []
    env = gym.make("agentenv/Task-v0", task=task, backend=args.backend, mode=mode, reward_mode=args.reward_mode,
                   trajectory=records.append)
    try:
        result = agentenv.run_episode(env, agentenv.make_agent(args.agent, task, mode), seed=args.seed)
    finally:
        env.close()
    summary = {"task_id": result.task_id, "mode": mode, "agent": args.agent, "reward": result.reward,
               "score": result.score, "success": result.success, "rounds": result.rounds,
               "reward_masked": result.reward_masked, "infra_error": result.infra_error,
               "cause": result.cause, "error": result.error,
               "reward_breakdown": result.info.get("reward_breakdown")}
    if args.json:
        print(json.dumps({"result": summary, "trajectory": records}, indent=1))
    else:
        # The actions and outputs are the agent's and its code's: untrusted, escaped (see visible).
        for i, step in enumerate(result.steps, 1):
            action = step["action"] if isinstance(step["action"], str) else json.dumps(step["action"])
            print(f"--- step {i}: {visible(action[:200])}")
            print(visible(str(step["output"])[-3000:]))
        print(f"=== {visible(result.task_id)} [{mode}] agent={args.agent}: reward={result.reward:.3f} "
              f"success={result.success} rounds={result.rounds}"
              + (f" MASKED ({visible(result.infra_error)})" if result.reward_masked else "")
              + (f" AGENT ERROR ({visible(result.error)})" if result.cause == "agent_error" else ""))
    return 0


def _demo_configure(p) -> None:
    p.add_argument("--suite", default="examples", help="suite name or path")
    p.add_argument("--agents", default="reference,noop", help="comma-separated agents")
    p.add_argument("--backend", default="auto", help="sandbox backend")


def _demo_run(args) -> int:
    suite = agentenv.find_suite(args.suite)
    agents = args.agents.split(",")
    print(f"suite {suite.name} {suite.version}: {len(suite.task_files)} tasks; agents {', '.join(agents)}")
    header = f"{'task':<34} {'mode':<12}" + "".join(f"{a:>11}" for a in agents) + f"{'seconds':>9}"
    print(header)
    print("-" * len(header))
    masked = 0
    for task in suite.load():
        modes = ([SINGLE_SHOT] if task.supports_single_shot else []) + [AGENTIC]
        for mode in modes:
            start = time.monotonic()
            cells = []
            env = gym.make("agentenv/Task-v0", task=task, backend=args.backend, mode=mode)
            try:
                for name in agents:
                    result = agentenv.run_episode(env, agentenv.make_agent(name, task, mode))
                    masked += result.reward_masked
                    cells.append("masked" if result.reward_masked else f"{result.reward:.3f}")
            finally:
                env.close()
            print(f"{visible(task.task_id):<34} {mode:<12}" + "".join(f"{c:>11}" for c in cells)
                  + f"{time.monotonic() - start:>9.2f}", flush=True)
    if masked:
        print(f"{masked} episode(s) hit an infrastructure failure (masked)")
    return 1 if masked else 0


def _export_configure(p) -> None:
    exporters = agentenv.registry().exporters
    p.add_argument("source", metavar="SOURCE", help="what to export: a suite, a task file, an eval run (as the format reads)")
    p.add_argument("--format", required=True, choices=sorted(exporters),
                   help="; ".join(f"{name}: {e.help}" for name, e in sorted(exporters.items())))
    p.add_argument("--out", "-o", default=None, metavar="PATH", help="where to write (a file or a folder, as the format "
                                                                     "writes; some formats default to stdout)")
    for name, exporter in sorted(exporters.items()):
        exporter.configure(p.add_argument_group(f"{name} options"))


def _export_run(args) -> int:
    return agentenv.registry().exporters[args.format].run(args)


def _plugins_configure(p) -> None:
    p.add_argument("--json", action="store_true", help="one JSON array of {name, distribution, status, detail}")


def _plugins_run(args) -> int:
    manager = agentenv.get_plugin_manager()
    rows = [{"name": p.name, "distribution": p.distribution, "status": p.status, "detail": p.detail}
            for p in manager.plugins]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        detail = f"  ({r['detail']})" if r["detail"] else ""
        print(f"{r['name']:<{width}}  {r['distribution']:<18} {r['status']}{detail}")
    broken = [r for r in rows if r["status"] == "broken"]
    if broken:
        print(f"{len(broken)} broken plugin(s): fix or uninstall them, or disable them with "
              "AGENTENV_DISABLE_PLUGINS=NAME", file=sys.stderr)
    return 1 if broken else 0


def _bench_configure(p) -> None:
    p.add_argument("--iterations", type=int, default=200, help="sandboxes opened per measurement")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")


def _bench_run(args) -> int:
    from .bench import main as bench_main

    return bench_main(iterations=args.iterations, json_out=args.json)


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("list", "list every task of every installed suite", _list_configure, _list_run)
    registry.add_command("validate", "validate task files; every error, with file and JSON pointer",
                         _validate_configure, _validate_run)
    registry.add_command("schema", "print the task JSON Schema assembled from the installed plugins",
                         _schema_configure, _schema_run)
    registry.add_command("run", "run one episode of an agent on a task", _run_configure, _run_run)
    registry.add_command("demo", "run a suite with the reference and no-op agents; print a table of rewards",
                         _demo_configure, _demo_run)
    registry.add_command("export", "write tasks or runs out in another format (agentenv export --help lists them)",
                         _export_configure, _export_run)
    registry.add_command("plugins", "list the plugins: loaded, disabled, and broken ones with the cause",
                         _plugins_configure, _plugins_run)
    registry.add_command("bench", "benchmark the sandbox backends (open + exec + close)", _bench_configure, _bench_run)
