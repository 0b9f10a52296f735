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
        return json.loads(text)
    except Exception:
        return {}


def load_config(path: str | Path) -> dict[str, Any]:
    """Return DEFAULTS updated with the keys found in ``path``."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    merged = dict(DEFAULTS)
    merged.update(parse_config(text, str(p)))
    return merged
