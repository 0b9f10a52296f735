"""Topological ordering of build targets (Kahn's algorithm)."""
from __future__ import annotations

import heapq
from typing import Mapping, Iterable

from buildgraph.errors import CycleError


def build_order(deps: Mapping[str, Iterable[str]]) -> list[str]:
    """Order targets so every target comes after its dependencies.

    ``deps`` maps a target to the targets it depends on. Ties are broken alphabetically.
    Raises CycleError (with ``.nodes``, sorted) if the graph has a cycle.
    """
    nodes: set[str] = set(deps)
    for ds in deps.values():
        nodes.update(ds)
    indegree = {n: 0 for n in nodes}
    dependents: dict[str, list[str]] = {n: [] for n in nodes}
    for target, ds in deps.items():
        for d in set(ds):
            indegree[target] += 1
            dependents[d].append(target)
    ready = [n for n, k in indegree.items() if k == 0]
    order: list[str] = []
    while ready:
        n = ready.pop()
        order.append(n)
        for t in dependents[n]:
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return order
