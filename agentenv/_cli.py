"""The ``agentenv`` command line; every subcommand comes from a plugin (``agentenv_add_cli_commands``)."""

from __future__ import annotations

import argparse
import logging
import sys

from ._errors import AgentEnvError
from ._plugins import registry


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentenv", description="Coding tasks as Gymnasium environments.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the framework decides")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in sorted(registry().commands.items()):
        p = sub.add_parser(name, help=command.help, description=command.help)
        command.configure(p)
        p.set_defaults(_run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
        return int(args._run(args) or 0)
    except AgentEnvError as exc:
        print(f"agentenv: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("agentenv: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
