"""CLI commands: ``agentenv llm-serve`` (an OpenAI-compatible server for a local model) and
``agentenv llm-tiny`` (build the tiny test model)."""

from __future__ import annotations

import sys

import agentenv


def _serve_configure(p) -> None:
    p.add_argument("model", help="a model directory (save_pretrained) or hub name")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--name", default=None, help="the model name clients send (default: the directory's name)")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:1... (default: cuda when there is one)")


def _serve_run(args) -> int:
    from .server import ModelServer

    server = ModelServer(args.model, name=args.name, host=args.host, port=args.port, device=args.device)
    print(f"[llm-serve] {server.name} on {server.url} ({server.device}); Ctrl-C stops", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.httpd.server_close()
    return 0


def _tiny_configure(p) -> None:
    p.add_argument("out", help="directory to write the model and tokenizer to")
    p.add_argument("--seed", type=int, default=0)


def _tiny_run(args) -> int:
    from .tiny import build_tiny

    print(build_tiny(args.out, seed=args.seed))
    return 0


@agentenv.hookimpl
def agentenv_add_cli_commands(registry) -> None:
    registry.add_command("llm-serve", "serve a local Hugging Face model over an OpenAI-compatible HTTP API",
                         _serve_configure, _serve_run)
    registry.add_command("llm-tiny", "build a tiny random-weight model and tokenizer (for tests; nothing downloaded)",
                         _tiny_configure, _tiny_run)
