"""Find nodes and values by name, and rename a value everywhere it is read or written.

Nested bodies (If/Loop/Scan) read outer values by name; a rename follows them down,
except into a body that defines the same name itself (it shadows the outer value).
"""

from __future__ import annotations

from collections.abc import Iterator

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


def find_node(graph: onnx.GraphProto, ref: str) -> int:
    """Index of the main-graph node named ``ref``; ``#12`` names an unnamed node by index."""
    for i, node in enumerate(graph.node):
        if node.name == ref:
            return i
    if ref.startswith("#") and ref[1:].isdigit() and int(ref[1:]) < len(graph.node):
        return int(ref[1:])
    raise EditError(f"no node named '{ref}' in the main graph")


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
