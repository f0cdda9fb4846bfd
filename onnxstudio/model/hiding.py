"""Hide nodes by type from the drawing (View → Hide Nodes): Constant, Identity, and the
shape computations exporters emit (Shape → Gather → Unsqueeze → Concat feeding a
Reshape), asked of Netron for years (netron#1525).

The layout is given a filtered copy of the graph, so it closes the gaps: hidden nodes
have no boxes, an Identity's readers take its input directly, and a value whose
producer is hidden arrives from nowhere (like a weight). Box ids stay the model's node
ids, so selection, the inspector and overlays work on the real model. Qt-free.
"""

from __future__ import annotations

from dataclasses import replace

from onnxstudio.model.graph import Graph, Model, Value

HIDE_KINDS: dict[str, str] = {
    "constant": "&Constant",
    "identity": "&Identity",
    "shape": "&Shape Computations (Shape → Gather → Unsqueeze → Concat…)",
}
# Operators of a shape computation: what a chain from Shape to a Reshape's shape does.
SHAPE_OPS = frozenset({
    "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast", "Mul",
    "Add", "Sub", "Div", "Range", "Equal", "Where", "ReduceProd", "ConstantOfShape",
    "Constant", "Floor", "Ceil", "Max", "Min", "Neg", "Not", "Less", "Greater", "Mod",
})
SMALL_CONSTANT = 64  # elements: a weight this small may take part in a shape computation
_STANDARD = ("", "ai.onnx")


def hidden_nodes(graph: Graph, kinds: frozenset[str]) -> set[int]:
    """Indices of the nodes of ``graph`` that ``kinds`` hide (a graph output's producer
    never is: it is an observable result)."""
    outputs = set(graph.outputs)
    hidden: set[int] = set()
    shaped: set[str] = set()  # values a hidden shape computation makes
    constants = {o for n in graph.nodes if n.op_type == "Constant" for o in n.outputs}
    for node in graph.nodes:  # topological: producers are decided before readers
        if node.domain not in _STANDARD or node.subgraphs or \
                any(o in outputs for o in node.outputs):
            continue
        op = node.op_type
        if (op == "Constant" and "constant" in kinds) or (
                op == "Identity" and "identity" in kinds and node.inputs[:1] != ("",)):
            hidden.add(node.index)
        elif "shape" in kinds and op in SHAPE_OPS and (op in ("Shape", "Size") or (
                any(i in shaped for i in node.inputs)
                and all(not i or i in shaped or i in constants or _small(graph, i)
                        for i in node.inputs))):
            hidden.add(node.index)
            shaped.update(node.outputs)
    if "shape" in kinds:  # a Constant only hidden computations read goes with them
        for node in graph.nodes:
            value = graph.values.get(node.outputs[0]) if node.outputs else None
            if node.op_type == "Constant" and value is not None and value.consumers \
                    and set(value.consumers) <= hidden and value.name not in outputs:
                hidden.add(node.index)
    return hidden


def _small(graph: Graph, name: str) -> bool:
    info = graph.initializers.get(name)
    return info is not None and info.elements <= SMALL_CONSTANT


def without_hidden(model: Model, kinds: frozenset[str]) -> tuple[Model, int]:
    """(the model to lay out, how many nodes it leaves out): ``model`` itself when
    nothing is hidden."""
    graph = model.graph
    hidden = hidden_nodes(graph, kinds) if kinds else set()
    if not hidden:
        return model, 0
    alias = {n.outputs[0]: n.inputs[0] for n in graph.nodes
             if n.index in hidden and n.op_type == "Identity" and n.outputs}

    def source(name: str) -> str:
        seen = 0
        while name in alias and seen < len(alias):
            name, seen = alias[name], seen + 1
        return name

    nodes = [replace(n, index=i, inputs=tuple(source(x) if x else x for x in n.inputs))
             for i, n in enumerate(n for n in graph.nodes if n.index not in hidden)]
    values: dict[str, Value] = {name: replace(v, producer=None, consumers=())
                                for name, v in graph.values.items()}
    reads: dict[str, list[int]] = {}
    for node in nodes:
        for name in node.outputs:
            if name in values:
                values[name].producer = node.index
        for name in node.inputs:
            if name in values:
                reads.setdefault(name, []).append(node.index)
    for name, read in reads.items():
        values[name].consumers = tuple(read)
    shown = replace(graph, nodes=nodes, values=values)
    return replace(model, graph=shown, derived={}), len(hidden)
