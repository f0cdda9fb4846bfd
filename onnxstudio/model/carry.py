"""What a pipeline stage recomputes rather than being fed: constants and cheap chains.

A stage carries its own copy of every node computed from weights alone (Constant, the
Shape of a weight...), and of the cheap chains an LLM computes from its inputs at the start
and reads in every layer: the lengths GroupQueryAttention takes from the attention mask,
the Shape/Gather/Unsqueeze/Concat/Cast arithmetic of the dynamo exporter's ``sym_size``
values, the causal mask. Handing those over made every cut carry 12–18 small tensors;
recomputing them costs microseconds and the model inputs they start from, which any stage
may be fed. A chain that starts at the Shape of another layer's cache (the dynamo exporter
reads ``past_key_values.8.key``'s batch size in its first nodes) is made to read an input
the stage is fed anyway whose declared dims are the same (:func:`shape_reads`): in ONNX,
equal ``dim_param`` names denote equal sizes, so each cache stays in its own layer's stage.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import onnx

from onnxstudio.model.cut import is_constant, value_deps
from onnxstudio.model.graph import Dim, Graph

CHEAP_OPS = frozenset({
    "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "Reshape",
    "Add", "Sub", "Mul", "Div", "Neg", "Max", "Min", "Range", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Not", "Where", "Expand",
    "ConstantOfShape", "ReduceSum", "ReduceMax", "GatherND", "Trilu", "Identity", "Flatten",
    "Cos", "Sin",
})
"""Operators of the shape and mask arithmetic an LLM recomputes in each stage for free."""
SMALL_WEIGHT = 64 * 1024
"""A chain reading a larger weight (the embedding table) is not cheap to copy."""


@dataclass(frozen=True)
class ShapeRead:
    """A Shape (or Size) node made to read another input of equal declared dims: a stage
    then needs not be fed a cache whose size alone it reads (:func:`shape_reads` finds them)."""

    node: int  # main-graph index of the Shape or Size node
    source: str  # the input it reads instead
    start: int  # axes [start, end) of ``source`` (Shape only)
    end: int

    def apply(self, proto: onnx.NodeProto) -> onnx.NodeProto:
        node = onnx.NodeProto()
        node.CopyFrom(proto)
        node.input[0] = self.source
        if node.op_type == "Shape":
            kept = [a for a in node.attribute if a.name not in ("start", "end")]
            del node.attribute[:]
            node.attribute.extend([*kept, onnx.helper.make_attribute("start", self.start),
                                   onnx.helper.make_attribute("end", self.end)])
        return node


def carried_nodes(graph: Graph) -> list[bool]:
    """For each main-graph node: whether a stage that needs it carries its own copy.

    Constants (weights alone) and cheap chains: a node of :data:`CHEAP_OPS` making integers
    or booleans from model inputs, small weights or other carried nodes' outputs, or making
    floats from those but no float model input (the rotary cos/sin tables and the additive
    mask, which start from positions and the 0/1 mask; an image's normalisation does not).
    One pass in topological order (the order split already requires).
    """
    memo: dict[int, bool] = {}
    carried = [is_constant(graph, i, memo) for i in range(len(graph.nodes))]
    for node in graph.nodes:
        if carried[node.index] or node.op_type not in CHEAP_OPS or node.domain or \
                node.subgraphs or not all(_typed(graph, o) for o in node.outputs if o):
            continue
        integral = all(_integral(graph, o) for o in node.outputs if o)
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
                cheap = (value is not None and value.kind == "input"
                         and (integral or _integral(graph, name))) or (
                    producer is not None and producer < node.index and carried[producer])
            if not cheap:
                break
        carried[node.index] = cheap
    return carried


def _typed(graph: Graph, name: str) -> bool:
    value = graph.values.get(name)
    return value is not None and value.type.dtype is not None


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


def shape_reads(graph: Graph, nodes: Sequence[int], fed: Collection[str]
                ) -> list[ShapeRead]:
    """Shape/Size reads among ``nodes`` moved off a model input the stage needs for nothing
    else, onto one it is ``fed`` for more than its size and declares the same dims for.

    An input whose every read cannot move is kept, and may then stand in for others.
    """
    sized: dict[str, list[int]] = {}
    needed: set[str] = set()
    for index in nodes:
        node = graph.nodes[index]
        for name in value_deps(graph, index):
            if name not in fed or graph.values[name].kind != "input":
                continue
            if node.op_type in ("Shape", "Size") and not node.domain and \
                    node.inputs[0] == name:
                sized.setdefault(name, []).append(index)
            else:
                needed.add(name)
    pending = [name for name in sized if name not in needed]
    kept = [name for name in fed if name not in pending and name in graph.values
             and graph.values[name].kind == "input"]  # declared dims, not inferred ones
    moved: list[ShapeRead] = []
    while pending:
        name = pending.pop(0)
        reads = [_moved(graph, index, kept) for index in sized[name]]
        if all(reads):
            moved += [r for r in reads if r is not None]
        else:
            kept.append(name)
    return moved


def _moved(graph: Graph, index: int, kept: Sequence[str]) -> ShapeRead | None:
    """The Shape or Size node ``index`` reading one of ``kept`` at equal declared dims."""
    node = graph.nodes[index]
    dims = graph.values[node.inputs[0]].type.shape
    if dims is None:
        return None
    if node.op_type == "Size":
        start, end = 0, len(dims)
    else:
        first, last = (node.attribute(a) for a in ("start", "end"))
        start, end, _ = slice(None if first is None else int(first.value),  # ONNX clamps
                              None if last is None else int(last.value)  # as Python does
                              ).indices(len(dims))
    wanted = dims[start:end]
    if not wanted or not all(_named(d) for d in wanted):
        return None
    for name in kept:
        shape = graph.values[name].type.shape if name in graph.values else None
        if shape is None or (node.op_type == "Size" and len(shape) != len(wanted)):
            continue
        for at in range(len(shape) - len(wanted) + 1):
            if tuple(shape[at:at + len(wanted)]) == tuple(wanted):
                return ShapeRead(index, name, at, at + len(wanted))
    return None


def _named(dim: Dim) -> bool:
    """A dim two inputs can be known to share: a number, or a dim_param name."""
    return (isinstance(dim, int) and dim >= 0) or (isinstance(dim, str) and bool(dim))
