"""Merge several configuration layers in order."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

DELETE = None


def merge_layers(layers: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    from confmerge.merge import deep_merge
    out: dict[str, Any] = {}
    for layer in layers:
        out = deep_merge(out, layer)
    return out
