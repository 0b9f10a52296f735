"""Pipelines built on batched()."""
from __future__ import annotations

from typing import Iterable

from streamtools.chunks import batched


def sum_batches(numbers: Iterable[int], n: int) -> list[int]:
    return [sum(b) for b in batched(numbers, n)]
