"""Paths through a graph: what lies between two nodes, for "Select Between" on the canvas.

Kept apart from ``cut.py`` (which turns a selection into a sub-model): choosing what to
select and cutting it are two jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from onnxstudio.model.cut import value_deps
from onnxstudio.model.graph import Graph


def nodes_between(graph: Graph, first: int, last: int) -> set[int]:
    """Every node on a path from node ``first`` to node ``last``, both included (in either
    order); empty when no path joins them. What "Select Between" selects on the canvas."""
    readers: dict[str, list[int]] = {}
    for node in graph.nodes:
        for name in value_deps(graph, node.index):
            readers.setdefault(name, []).append(node.index)

    def reach(start: int, step: Callable[[int], Iterable[int]]) -> set[int]:
        seen, pending = {start}, [start]
        while pending:
            for nxt in step(pending.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    pending.append(nxt)
        return seen

    def downstream(i: int) -> Iterable[int]:
        return (r for o in graph.nodes[i].outputs if o for r in readers.get(o, ()))

    def upstream(i: int) -> Iterable[int]:
        for name in value_deps(graph, i):
            value = graph.values.get(name)
            if value is not None and value.producer is not None:
                yield value.producer

    if first > last:  # nodes are stored in topological order: paths run forwards
        first, last = last, first
    between = reach(first, downstream) & reach(last, upstream)
    return between if first in between and last in between else set()
