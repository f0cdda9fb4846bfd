"""Look-ups across nested bodies: which graph holds a node, who produces or reads a value.

Value.producer/consumers are indices into their own graph, and a body may read a value
its enclosing graph defines; the panels and search need to turn both into node ids the
canvas understands, so this index maps every graph to its parent once per model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from onnxstudio.model.graph import Graph, InitializerInfo, Model, Node, Value


@dataclass(frozen=True)
class ValueRef:
    """A value as seen from one graph: where it is defined and its producer/consumers."""

    value: Value
    graph: Graph  # the graph whose ``values`` holds the defining entry
    producer: str | None  # node id, "in:<name>" for a main-graph input, None for weights
    consumers: list[str]
    initializer: InitializerInfo | None


class ModelIndex:
    """Node id -> (graph, node), graph -> enclosing graph; built once per Model."""

    def __init__(self, model: Model) -> None:
        # The main graph, not the model: the model keeps its index (``derived``), and an
        # index pointing back made a cycle only a full collection frees (issue 32).
        self.main = model.graph
        self.nodes: dict[str, Node] = {}
        # The graph of each node outside the main graph: a (graph, node) pair per node
        # was 100k tuples on dag100k that the collector scanned for the model's life.
        self.body_of: dict[str, Graph] = {}
        self.parent: dict[int, Graph | None] = {}
        self._add(model.graph, None)
        for function in model.functions:
            self._add(function.body, None)

    @classmethod
    def of(cls, model: Model) -> ModelIndex:
        """The model's index, built once and shared by every panel."""
        return model.memo("index", lambda: cls(model))

    def _add(self, graph: Graph, parent: Graph | None) -> None:
        self.parent[id(graph)] = parent
        nodes = self.nodes
        for node in graph.nodes:
            nodes[node.id] = node
            if graph is not self.main:
                self.body_of[node.id] = graph
            for body in node.subgraphs.values():
                self._add(body, graph)

    def graphs(self) -> Iterator[Graph]:
        """The main graph and every nested body (function bodies excluded), depth first."""
        stack = [self.main]
        while stack:
            graph = stack.pop()
            yield graph
            for node in reversed(graph.nodes):
                stack.extend(reversed(list(node.subgraphs.values())))

    def node(self, node_id: str) -> Node | None:
        return self.nodes.get(node_id)

    def graph_of(self, node_id: str) -> Graph | None:
        if node_id not in self.nodes:
            return None
        return self.body_of.get(node_id, self.main)

    def value(self, graph: Graph, name: str) -> ValueRef | None:
        """Resolve ``name`` as read in ``graph``, walking out through enclosing scopes."""
        scope: Graph | None = graph
        first: Value | None = None
        while scope is not None:
            value = scope.values.get(name)
            if value is not None:
                first = first or value
                if value.kind != "captured":
                    return self._ref(scope, value)
            scope = self.parent.get(id(scope))
        if first is not None:  # captured but defined nowhere we can see
            return ValueRef(first, graph, None, [], None)
        return None

    def _ref(self, graph: Graph, value: Value) -> ValueRef:
        producer: str | None = None
        if value.producer is not None:
            producer = graph.nodes[value.producer].id
        elif value.kind == "input" and graph is self.main:
            producer = f"in:{value.name}"
        consumers = [graph.nodes[i].id for i in value.consumers]
        if value.kind == "output" and graph is self.main:
            consumers.append(f"out:{value.name}")
        return ValueRef(value, graph, producer, consumers, graph.initializers.get(value.name))

    def find_initializer(self, name: str) -> InitializerInfo | None:
        for graph in self.graphs():
            info = graph.initializers.get(name)
            if info is not None:
                return info
        return None


def node_by_id(model: Model, node_id: str) -> Node | None:
    """Look a node up by id, in nested bodies and function bodies too (indexed once)."""
    return ModelIndex.of(model).node(node_id)
