"""Parse .env files."""
from __future__ import annotations

from envfile.errors import EnvSyntaxError


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return inner.replace("\\n", "\n") if value[0] == '"' else inner
    return value.split(" #", 1)[0].strip()


def parse_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        if "=" not in line:
            raise EnvSyntaxError(f"line {lineno}: expected KEY=VALUE")
        key, value = line.split("=", 1)
        key = key.strip()
        if not key.isidentifier():
            raise EnvSyntaxError(f"line {lineno}: bad key {key!r}")
        env[key] = _unquote(value.strip())
    return env
