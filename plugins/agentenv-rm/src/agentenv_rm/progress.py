"""Progress bars for long steps (tqdm on stderr), or a silent stand-in."""

from __future__ import annotations

import sys
from typing import Callable


def progress_bar(enabled: bool) -> Callable:
    """``bar(iterable, desc, total=None)``: a tqdm bar on stderr, or a silent stand-in."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        tqdm = None

    def bar(iterable, desc, total=None):
        if tqdm is None or not enabled:
            return _Quiet(iterable)
        return tqdm(iterable, desc=desc, total=total, file=sys.stderr, dynamic_ncols=True, leave=False,
                    mininterval=1.0)
    return bar


class _Quiet:
    def __init__(self, iterable):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def update(self, n):
        pass

    def set_postfix(self, **kw):
        pass

    def close(self):
        pass
