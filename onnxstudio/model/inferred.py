"""Apply the value types onnx's shape inference found to an already built Model.

Kept apart from reader.py so the window can draw the graph first: the types arrive
later (from a child process for large graphs) and only ``Value.type`` changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from onnxstudio.model.graph import Graph, Model, TensorType
from onnxstudio.model.onnx_core import AttributeProto
from onnxstudio.model.typeproto import UNKNOWN, tensor_type

if TYPE_CHECKING:
    import onnx


def value_infos(graph: onnx.GraphProto, nested: bool = True) -> Iterator[onnx.ValueInfoProto]:
    """The value_info and outputs of ``graph`` and (``nested``) of every body in it."""
    stack = [graph]
    while stack:
        g = stack.pop()
        yield from g.value_info
        yield from g.output
        if not nested:
            continue
        for node in g.node:
            if not len(node.attribute):
                continue
            for attr in node.attribute:
                if attr.type == AttributeProto.GRAPH:
                    stack.append(attr.g)
                elif attr.type == AttributeProto.GRAPHS:
                    stack.extend(attr.graphs)


def _graphs(model: Model) -> list[Graph]:
    """The main graph, every nested body and every local-function body."""
    out: list[Graph] = []
    stack = [model.graph, *(f.body for f in model.functions)]
    while stack:
        graph = stack.pop()
        out.append(graph)
        stack.extend(body for node in graph.nodes if node.subgraphs
                     for body in node.subgraphs.values())
    return out


def inferred_types(inferred: onnx.ModelProto, nested: bool = True
                   ) -> dict[str, TensorType | None]:
    """Name -> type of every ValueInfoProto in ``inferred`` (None: nothing known), each
    distinct TypeProto converted once; the last of several infos of one name wins.
    Without ``nested`` bodies, the inferred graph's nodes need not be walked."""
    cache: dict[bytes, TensorType | None] = {}
    types: dict[str, TensorType | None] = {}
    for vi in value_infos(inferred.graph, nested):
        type_proto = vi.type
        key = type_proto.SerializeToString()
        try:
            types[vi.name] = cache[key]
        except KeyError:
            found = tensor_type(type_proto)
            types[vi.name] = cache[key] = None if found == UNKNOWN else found
    return types


def apply_inferred_types(model: Model, inferred: onnx.ModelProto) -> int:
    """Give every value whose type the file leaves unknown the type shape inference found.

    Declared types (value_info, inputs, outputs, weights) win. Safe to call once the
    model is shown: only ``Value.type`` attributes are replaced. Returns how many changed.
    """
    return apply_types(model, inferred_types(
        inferred, any(node.subgraphs for node in model.graph.nodes)))


def apply_types(model: Model, types: dict[str, TensorType | None]) -> int:
    """:func:`apply_inferred_types` with the types already read (by a forked process)."""
    changed = 0
    for graph in _graphs(model):
        for name, value in graph.values.items():
            vt = value.type  # unknown: TensorType(), compared field by field (3x faster)
            if vt.dtype is None and vt.shape is None and vt.kind == "tensor":
                found = types.get(name)
                if found is not None:
                    value.type = found
                    changed += 1
    if changed:
        model.forget_typed_views()
    return changed
