"""New edge labels for a layout once inferred shapes arrive, without laying it out again.

The window draws a model before its shapes are known and relabels the edges when they
come. Geometry does not depend on edge labels, so for a graph without bodies or local
functions drawn in place the drawing only needs its labels swapped: a fraction of the
second on 100k nodes, where a new layout takes over two. Input and output boxes print
their type and are sized by it, and so do boxes a folded ConstantOfShape prints its shape
in: if one of those texts may change, the caller lays out again.
"""

from __future__ import annotations

from onnxstudio.layout.labels import folded_constants, shape_text, type_text
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Graph


def relabelled(layout: Layout, graph: Graph) -> Layout | None:
    """``layout`` with edge labels from ``graph``'s value types now; None when something
    could move (nested bodies or function calls, an input/output box whose text changed)."""
    if any(node.subgraphs or node.function for node in graph.nodes):
        return None
    if _folded_shape_printed(graph):
        return None
    values = graph.values
    for box in layout.boxes:
        if box.kind in ("input", "output"):
            value = values.get(box.id.split(":", 1)[1])
            if value is not None and box.details != (type_text(value.type),):
                return None
    edges = []
    for edge in layout.edges:
        value = values.get(edge.value)
        label = edge.label if value is None else (
            shape_text(value.type) if value.type.shape is not None else "")
        edges.append(edge if label == edge.label else
                     edge.relabelled(label))
    return Layout(layout.direction, layout.width, layout.height, layout.boxes, layout.groups,
                  edges)


def _folded_shape_printed(graph: Graph) -> bool:
    """Whether a ConstantOfShape is folded into its readers' boxes: its detail line prints
    the shape inference found ("W ⟨64×3×3×3⟩" instead of "W ⟨filled⟩"), which sizes them."""
    fills = [n.outputs[0] for n in graph.nodes if n.op_type == "ConstantOfShape" and n.outputs]
    return bool(fills) and not folded_constants(graph).keys().isdisjoint(fills)
