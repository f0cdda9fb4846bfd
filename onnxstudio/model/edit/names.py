"""Find nodes and values by name, and rename a value everywhere it is read or written.

Nested bodies (If/Loop/Scan) read outer values by name; a rename follows them down,
except into a body that defines the same name itself (it shadows the outer value).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import onnx

from onnxstudio.errors import EditError


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def defined_names(graph: onnx.GraphProto) -> set[str]:
    """Values a graph defines itself: its inputs, weights and node outputs."""
    names = {vi.name for vi in graph.input}
    names.update(t.name for t in graph.initializer)
    names.update(t.values.name for t in graph.sparse_initializer)
    names.update(o for node in graph.node for o in node.output if o)
    return names


def all_names(graph: onnx.GraphProto) -> set[str]:
    """Every value name used anywhere in ``graph`` and its nested bodies."""
    names = defined_names(graph)
    names.update(vi.name for vi in (*graph.output, *graph.value_info))
    for node in graph.node:
        names.update(i for i in node.input if i)
        for body in subgraphs(node):
            names |= all_names(body)
    return names


class NodeIndex:
    """Main-graph node name -> index of the model an EditSession edits. A walk of the
    node list costs 30 ms on dag100k and the window applies edits on its GUI thread, so
    the session keeps this, built once (on the worker that opens it) and kept true by
    the edits: a rename updates it, an edit that adds, removes or restores nodes drops
    it to be built again at the next look-up."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.graph = graph
        self._at: dict[str, int] | None = None
        self._repeated: set[str] = set()  # names more than one node has ("" often)

    def prepare(self) -> dict[str, int]:
        if self._at is None:
            at: dict[str, int] = {}
            repeated: set[str] = set()
            for i, node in enumerate(self.graph.node):
                if node.name in at:
                    repeated.add(node.name)
                else:
                    at[node.name] = i  # the first, as a walk finds it
            self._at, self._repeated = at, repeated
        return self._at

    def find(self, name: str) -> int | None:
        index = self.prepare().get(name)
        if index is not None and self.graph.node[index].name != name:
            self._at = None  # changed behind the index's back: never trust it blindly
            index = self.prepare().get(name)
        return index

    def renamed(self, old: str, new: str, index: int) -> None:
        """Node ``index`` was renamed from ``old`` to ``new``."""
        at = self._at
        if at is None:
            return
        if old in self._repeated or new in at:
            self._at = None  # which node a repeated name finds: built again when asked
            return
        if at.get(old) == index:
            del at[old]
        at[new] = index

    def drop(self) -> None:
        self._at = None


_INDEX: ContextVar[NodeIndex | None] = ContextVar("node_index", default=None)


@contextmanager
def indexed(index: NodeIndex) -> Iterator[None]:
    """Look-ups of ``index.graph``'s nodes inside this block go through ``index``."""
    token = _INDEX.set(index)
    try:
        yield
    finally:
        _INDEX.reset(token)


def _index_of(graph: onnx.GraphProto) -> NodeIndex | None:
    index = _INDEX.get()
    return index if index is not None and index.graph is graph else None


def has_node(graph: onnx.GraphProto, name: str) -> bool:
    index = _index_of(graph)
    if index is not None:
        return index.find(name) is not None
    return any(n.name == name for n in graph.node)


def find_node(graph: onnx.GraphProto, ref: str) -> int:
    """Index of the main-graph node named ``ref``; ``#12`` names an unnamed node by index."""
    index = _index_of(graph)
    found = index.find(ref) if index is not None else None
    if found is not None:
        return found
    for i, node in enumerate(graph.node):
        if node.name == ref:
            return i
    if ref.startswith("#") and ref[1:].isdigit() and int(ref[1:]) < len(graph.node):
        return int(ref[1:])
    raise EditError(f"no node named '{ref}' in the main graph")


def node_renamed(graph: onnx.GraphProto, old: str, new: str, at: int) -> None:
    index = _index_of(graph)
    if index is not None:
        index.renamed(old, new, at)


def node_ref(graph: onnx.GraphProto, index: int) -> str:
    """How a script names node ``index``: its name, or ``#index`` when it has none."""
    name = graph.node[index].name
    return name if name else f"#{index}"


def producer(graph: onnx.GraphProto, name: str) -> int | None:
    return next((i for i, n in enumerate(graph.node) if name in n.output), None)


def readers(graph: onnx.GraphProto, name: str) -> list[int]:
    """Main-graph nodes that read ``name``, directly or from a nested body."""
    return [i for i, node in enumerate(graph.node)
            if name in node.input or any(_reads(body, name) for body in subgraphs(node))]


def _reads(graph: onnx.GraphProto, name: str) -> bool:
    if name in defined_names(graph):
        return False
    return any(name in node.input or any(_reads(b, name) for b in subgraphs(node))
               for node in graph.node) or any(o.name == name for o in graph.output)


def rename_value(graph: onnx.GraphProto, old: str, new: str, *, top: bool = True) -> int:
    """Rename value ``old`` to ``new`` in ``graph`` and every body that reads it.

    Returns how many places changed. The caller checks that ``new`` is unused.
    """
    if not top and old in defined_names(graph):
        return 0  # this body has its own value of that name
    count = 0
    for vi in (*graph.input, *graph.output, *graph.value_info):
        if vi.name == old:
            vi.name = new
            count += 1
    for tensor in graph.initializer:
        if tensor.name == old:
            tensor.name = new
            count += 1
    for sparse in graph.sparse_initializer:
        if sparse.values.name == old:
            sparse.values.name = new
            count += 1
    for node in graph.node:
        for field in (node.input, node.output):
            for slot, name in enumerate(field):
                if name == old:
                    field[slot] = new
                    count += 1
        for body in subgraphs(node):
            count += rename_value(body, old, new, top=False)
    return count
