"""Refuse to hand onnx's C++ shape inference a graph it is known to crash on.

onnx 1.23's inference dereferences the type of every node input; an input that nothing
defines (a dangling name, a removed graph input) has none, and some operators (e.g.
ai.onnx.ml LabelEncoder) then crash the whole process. The fuzz test found it; this
check finds such names first so inference is skipped with a warning instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from onnxstudio.model.onnx_core import AttributeProto

if TYPE_CHECKING:
    import onnx

# Above this many nodes the Python walk costs more than it is worth on every open; the
# window infers such graphs in a child process anyway (see infer_child).
GUARD_NODES = 20_000


def _bodies(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out: list[onnx.GraphProto] = []
    for attr in node.attribute:
        if attr.type == AttributeProto.GRAPH:
            out.append(attr.g)
        elif attr.type == AttributeProto.GRAPHS:
            out.extend(attr.graphs)
    return out


def _names(graph: onnx.GraphProto, defined: set[str], read: set[str]) -> None:
    """Every name ``graph`` and its bodies define, and every name their nodes read: one
    pass of C-level set updates, so the common case (nothing dangling) stays cheap."""
    defined.update(v.name for v in graph.input)
    defined.update(t.name for t in graph.initializer)
    defined.update(s.values.name for s in graph.sparse_initializer)
    for node in graph.node:
        defined.update(node.output[:])  # a sliced copy iterates faster than the field
        read.update(node.input[:])
        if len(node.attribute):
            for body in _bodies(node):
                _names(body, defined, read)


def _first_undefined(graph: onnx.GraphProto, defined: set[str]) -> tuple[str, str] | None:
    """The first input, in node order, that ``defined`` lacks (and the node reading it)."""
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                return name, node.name or node.op_type
        for body in _bodies(node):
            found = _first_undefined(body, defined)
            if found:
                return found
    return None


def unsafe_for_inference(proto: onnx.ModelProto) -> str | None:
    """Why shape inference must not run on ``proto``, or None when it may."""
    if len(proto.graph.node) > GUARD_NODES:
        return None
    defined: set[str] = set()
    read: set[str] = set()
    _names(proto.graph, defined, read)
    read.discard("")  # an omitted optional input
    found = _first_undefined(proto.graph, defined) if read - defined else None
    if found:
        return (f"shape inference skipped: input '{found[0]}' of node '{found[1]}' is "
                "produced by nothing")
    return None
