"""What an operator's box looks like (detail lines, colour, size), kept per live graph.

The group walk (build.py) makes a box per visible operator: Expand All of dag100k makes
100k. A box's look depends on its operator type and domain, its attributes and the
weights and folded constants it reads; an operator of the default domain with no
attributes that reads none (every node of dag100k, half of a transformer's) looks like
every other of its type: those share one look per type, found by one lookup. The others
get a look of their own, made once per graph and kept by node id (their lines and sizes
shared through a memo).
"""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache
from operator import attrgetter

from onnxstudio.layout import labels, sizing
from onnxstudio.layout.per_graph import PerGraph
from onnxstudio.layout.types import Box
from onnxstudio.model.graph import Graph, Node

Look = tuple[tuple[str, ...], str, float, float]  # detail lines, category, width, height

_ID = attrgetter("id")
_FUNCTION = attrgetter("function")
# The group walk makes a plain operator's box by setting these slots of a new Box (calling
# the dataclass was two thirds of the walk): a field added to Box must be set there too.
BOX_SLOTS = ("id", "kind", "x", "y", "width", "height", "title", "subtitle", "details",
             "category", "expandable")
assert tuple(f.name for f in fields(Box)) == BOX_SLOTS


@lru_cache(maxsize=1024)
def kind_look(op_type: str) -> Look:
    """The look of a default-domain operator that has no attributes and reads no
    weight: its type's."""
    width, height = sizing.box_size(op_type)
    return (), labels.category(op_type), width, height


class GraphLooks:
    """The looks of one graph's operators (with one set of folded constants' texts, which
    inferred types can change), kept while the graph lives: a re-layout after a toggle
    finds them all. Also the graph's nodes by id, which every layout walks. Holds no
    reference to the graph (``PerGraph`` keeps it while the graph lives, not longer)."""

    __slots__ = ("_sizes", "folded", "kinds", "looks", "nodes", "special", "weights")

    def __init__(self, graph: Graph, folded: dict[str, str]) -> None:
        self.folded = folded
        self.nodes: dict[str, Node] = dict(zip(map(_ID, graph.nodes), graph.nodes, strict=True))
        # nodes with bodies or calling a function (found in C): their boxes are made
        # one by one, as they may open in place
        self.special = set(map(_ID, graph.nesting())) | set(
            map(_ID, filter(_FUNCTION, graph.nodes)))
        self.weights = graph.initializers.keys() | folded.keys()  # read: lines of their own
        self.looks: dict[str, Look] = {}  # node id -> look, of nodes with a look of their own
        self.kinds: dict[str, Look] = {}  # op type -> the look its plain nodes share
        self._sizes: dict[tuple[str, tuple[str, ...]], tuple[float, float]] = {}

    def own(self, node: Node) -> bool:
        """Whether ``node``'s look is its own: with attributes, of another domain, or
        reading a weight or a folded constant (the group walk asks this inline)."""
        return bool(node.attributes or node.domain or (
            self.weights and not self.weights.isdisjoint(node.inputs)))

    def look(self, node: Node, graph: Graph) -> Look:
        """``node``'s look (a node of ``graph``), made and kept if it has none yet."""
        if not self.own(node):
            return self.kinds.get(node.op_type) or self.kind(node.op_type)
        return self.looks.get(node.id) or self.own_look(node, graph)

    def kind(self, op_type: str) -> Look:
        """The look the plain nodes of ``op_type`` share, kept."""
        look = self.kinds[op_type] = kind_look(op_type)
        return look

    def own_look(self, node: Node, graph: Graph) -> Look:
        """The look of a node of ``graph`` with attributes or folded inputs, kept (boxes
        that look alike share their lines and size)."""
        details = labels.attribute_lines(node)
        if self.weights:
            details = details + labels.folded_input_lines(node, graph, self.folded)
        if details:
            details = sizing.fit_details(details)
        lines = tuple(details)
        key = (node.op_type, lines)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = sizing.box_size(node.op_type, lines)
        look = self.looks[node.id] = (key[1], labels.category(node.op_type, node.domain),
                                      size[0], size[1])
        return look


_LOOKS: PerGraph[GraphLooks] = PerGraph(size=8)


def graph_looks(graph: Graph, folded: dict[str, str]) -> GraphLooks:
    """``graph``'s kept looks for ``folded`` (a different ``folded`` starts afresh)."""
    hit = _LOOKS.get(graph)
    if hit is None or hit.folded != folded:
        hit = GraphLooks(graph, folded)
        _LOOKS.put(graph, hit)
    return hit
