"""Parameter normalisation."""
from __future__ import annotations

from typing import Any, Mapping


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def flatten_params(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, text) pairs in insertion order; lists/tuples repeat the key; None dropped."""
    out: list[tuple[str, str]] = []
    for k, v in params.items():
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            out.extend((k, _text(x)) for x in v if x is not None)
        else:
            out.append((k, _text(v)))
    return out
