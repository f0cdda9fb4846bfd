"""Refuse to hand onnx's C++ shape inference a graph it is known to crash on.

onnx 1.23's inference dereferences the type of every node input; an input that nothing
defines (a dangling name, a removed graph input) has none, and some operators (e.g.
ai.onnx.ml LabelEncoder) then crash the whole process. The fuzz test found it; this
check finds such names first so inference is skipped with a warning instead.
"""

from __future__ import annotations

import onnx

# Above this many nodes the Python walk costs more than it is worth on every open; the
# window infers such graphs in a child process anyway (see infer_child).
GUARD_NODES = 20_000


def _defined(graph: onnx.GraphProto, names: set[str]) -> None:
    names.update(v.name for v in graph.input)
    names.update(t.name for t in graph.initializer)
    names.update(s.values.name for s in graph.sparse_initializer)
    for node in graph.node:
        names.update(node.output)
        for attr in node.attribute:
            for body in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                _defined(body, names)


def _undefined(graph: onnx.GraphProto, names: set[str]) -> tuple[str, str] | None:
    for node in graph.node:
        for name in node.input:
            if name and name not in names:
                return name, node.name or node.op_type
        for attr in node.attribute:
            for body in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                found = _undefined(body, names)
                if found:
                    return found
    return None


def unsafe_for_inference(proto: onnx.ModelProto) -> str | None:
    """Why shape inference must not run on ``proto``, or None when it may."""
    if len(proto.graph.node) > GUARD_NODES:
        return None
    names: set[str] = set()
    _defined(proto.graph, names)
    found = _undefined(proto.graph, names)
    if found:
        return (f"shape inference skipped: input '{found[0]}' of node '{found[1]}' is "
                "produced by nothing")
    return None
