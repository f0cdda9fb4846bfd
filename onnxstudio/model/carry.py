"""What a pipeline stage recomputes rather than being fed: constants and cheap chains.

A stage carries its own copy of every node computed from weights alone (Constant, the
Shape of a weight...), and of the cheap chains an LLM computes from its inputs at the start
and reads in every layer: the lengths GroupQueryAttention takes from the attention mask,
the Shape/Gather/Unsqueeze/Concat/Cast arithmetic of the dynamo exporter's ``sym_size``
values, the causal mask. Handing those over made every cut carry 12–18 small tensors;
recomputing them costs microseconds and the model inputs they start from, which any stage
may be fed.
"""

from __future__ import annotations

from collections.abc import Sequence

from onnxstudio.model.cut import is_constant, value_deps
from onnxstudio.model.graph import Graph

CHEAP_OPS = frozenset({
    "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "Reshape",
    "Add", "Sub", "Mul", "Div", "Neg", "Max", "Min", "Range", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Not", "Where", "Expand",
    "ConstantOfShape", "ReduceSum", "ReduceMax", "GatherND", "Trilu", "Identity", "Flatten",
})
"""Operators of the shape and mask arithmetic an LLM recomputes in each stage for free."""
SMALL_WEIGHT = 64 * 1024
"""A chain reading a larger weight (the embedding table) is not cheap to copy."""


def carried_nodes(graph: Graph) -> list[bool]:
    """For each main-graph node: whether a stage that needs it carries its own copy.

    Constants (weights alone) and cheap chains: a node of :data:`CHEAP_OPS` making integers
    or booleans from model inputs, small weights or other carried nodes' outputs. One pass in
    topological order (the order split already requires).
    """
    memo: dict[int, bool] = {}
    carried = [is_constant(graph, i, memo) for i in range(len(graph.nodes))]
    for node in graph.nodes:
        if carried[node.index] or node.op_type not in CHEAP_OPS or node.domain or \
                node.subgraphs or not all(_integral(graph, o) for o in node.outputs if o):
            continue
        cheap = True
        for name in node.inputs:
            if not name:
                continue
            weight = graph.initializers.get(name)
            if weight is not None:
                cheap = weight.nbytes <= SMALL_WEIGHT
            else:
                value = graph.values.get(name)
                producer = value.producer if value is not None else None
                cheap = (value is not None and value.kind == "input") or (
                    producer is not None and producer < node.index and carried[producer])
            if not cheap:
                break
        carried[node.index] = cheap
    return carried


def _integral(graph: Graph, name: str) -> bool:
    """Shapes, lengths, ids and masks are integers or booleans; hidden states are not."""
    value = graph.values.get(name)
    dtype = value.type.dtype if value is not None else None
    return bool(dtype) and dtype.startswith(("int", "uint", "bool"))  # type: ignore[union-attr]


def carried_producers(graph: Graph, index: int, carried: Sequence[bool]) -> list[int]:
    """The carried producers node ``index`` needs, transitively (a stage copies them)."""
    found: list[int] = []
    seen: set[int] = set()
    pending = [index]
    while pending:
        for name in value_deps(graph, pending.pop()):
            value = graph.values.get(name)
            producer = value.producer if value is not None else None
            if producer is not None and carried[producer] and producer not in seen:
                seen.add(producer)
                found.append(producer)
                pending.append(producer)
    return found
