"""The ``agentenv`` command line; every subcommand comes from a plugin (``agentenv_add_cli_commands``).

Every command shares what this module adds: options show their defaults in ``--help``, a mistyped
command gets the closest names (``agentenv lsit``), and output piped into a reader that stops early
(``agentenv list | head``) ends quietly, as ``cat`` does, instead of with a BrokenPipeError.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys

from ._errors import AgentEnvError, did_you_mean, visible
from ._plugins import registry

#: the exit status of a command whose reader went away (128 + SIGPIPE, what a shell reports for ``cat``)
BROKEN_PIPE_STATUS = 141


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help, unless the help already names its default or
    the default says nothing (None, False for a flag, an empty string)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if not _shows_default(default) or not action.option_strings or "default" in text.lower():
            return text
        shown = ",".join(map(str, default)) if isinstance(default, (tuple, list)) else default
        return f"{text} (default: {str(shown).replace('%', '%%')})" if text else f"default: {shown}"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose subparsers share the help formatter, and whose "invalid choice"
    errors name the closest choices."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        match = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if match:
            choices = re.findall(r"'([^']*)'", match.group(2))
            hint = did_you_mean(match.group(1), choices)
            if hint:
                message = f"invalid choice: {match.group(1)!r}; did you mean {hint}? (choose from {match.group(2)})"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="agentenv", description="Coding tasks as Gymnasium environments.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the framework decides")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, command in sorted(registry().commands.items()):
        p = sub.add_parser(name, help=command.help, description=command.help)
        command.configure(p)
        p.set_defaults(_run=command.run)
        for action in p._actions:  # a plugin's option without help still shows its default
            if action.help is None and action.option_strings and _shows_default(action.default):
                action.help = "default: %(default)s"
    return parser


def _shows_default(default) -> bool:
    return not (default is argparse.SUPPRESS or default is None or default is False or default == "")


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null, so the interpreter's final flush of what is
    still buffered does not raise a second time ("Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a descriptor
        pass


def _flush_stdout() -> bool:
    """Flush stdout now; False (and stdout silenced) when its reader has gone away."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit:  # --help or a usage error: its text may still sit in stdout's buffer
            if not _flush_stdout():
                return BROKEN_PIPE_STATUS
            raise
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
        status = int(args._run(args) or 0)
        return status if _flush_stdout() else BROKEN_PIPE_STATUS  # found here, not at interpreter exit
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_STATUS
    except AgentEnvError as exc:
        print(f"agentenv: error: {visible(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("agentenv: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
