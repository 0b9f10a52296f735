"""Build URLs with query strings."""
from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import quote

from webutil.params import flatten_params


def build_query(params: Mapping[str, Any]) -> str:
    """Encode params; None is dropped, lists become repeated keys, bools become true/false."""
    return "&".join(f"{k}={v}" for k, v in params.items())


def build_url(base: str, params: Mapping[str, Any] | None = None) -> str:
    query = build_query(params or {})
    if not query:
        return base
    sep = "?"
    return f"{base}{sep}{query}"
