"""``agentenv serve-mcp TASK``."""

from __future__ import annotations

import agentenv


def _configure(p) -> None:
    p.add_argument("task", help="a task id, env id or task file")
    p.add_argument("--backend", default="auto", help="sandbox backend (default: auto)")
    p.add_argument("--reward-mode", default="terminal", choices=["terminal", "dense"])
    p.add_argument("--max-rounds", type=int, default=None, help="tool calls an episode may make (default: the task's)")
    p.add_argument("--trajectory", default=None, metavar="FILE",
                   help="append every reset and step to this JSONL file (agentenv export / reverify read it)")


def _run(args) -> int:
    from .server import main

    kwargs = {"backend": args.backend, "reward_mode": args.reward_mode, "max_rounds": args.max_rounds}
    if args.trajectory:
        kwargs["trajectory"] = args.trajectory
    return main(args.task, **kwargs)


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("serve-mcp", "serve one live sandbox of a task over MCP (stdio): its actions are the tools",
                         _configure, _run)
