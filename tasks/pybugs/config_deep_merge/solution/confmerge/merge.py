"""Deep merging of configuration mappings."""
from __future__ import annotations

import copy
from typing import Any, Mapping

from confmerge.layers import DELETE


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Return a new dict: ``override`` merged into ``base`` recursively.

    Nested dicts are merged, everything else (lists included) is replaced, and a
    value of ``DELETE`` (None) removes the key. Inputs are never modified.
    """
    result = copy.deepcopy(dict(base))
    for key, value in override.items():
        if value is DELETE:
            result.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result
