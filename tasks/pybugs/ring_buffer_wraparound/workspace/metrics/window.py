"""Windowed statistics."""
from __future__ import annotations

from typing import Iterable

from metrics.ring import RingBuffer


def moving_average(values: Iterable[float], window: int) -> list[float]:
    buf: RingBuffer[float] = RingBuffer(window)
    out = []
    for v in values:
        buf.push(v)
        out.append(sum(buf) / len(buf))
    return out
