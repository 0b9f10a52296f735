"""Load JSON configuration files on top of defaults."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from settings.defaults import DEFAULTS
from settings.errors import ConfigError


def parse_config(text: str, source: str = "<string>") -> dict[str, Any]:
    """Parse JSON text; raise ConfigError with the line number on bad syntax."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: top level must be an object")
    return data


def load_config(path: str | Path) -> dict[str, Any]:
    """Return DEFAULTS updated with the keys found in ``path``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror}") from exc
    merged = dict(DEFAULTS)
    merged.update(parse_config(text, str(p)))
    return merged
