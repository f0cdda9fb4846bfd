"""One graph holding both sides of a diff, for the merged view.

It is A's graph (matched, changed and removed nodes, with their ids kept, so A's
selection and overlays apply) plus B's added nodes, wired to the A tensors their B inputs
pair with. An A node that reads an added node's output in B gets that edge as an extra
input, so the new path and the old one are both drawn. Added nodes are placed in the
name scope of the A node they feed (or are fed by), so they sit where they belong.
"""

from __future__ import annotations

from dataclasses import replace

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.model.diff import ModelDiff
from onnxstudio.model.graph import NO_BODIES, Graph, Model, Node, Value

ADDED_PREFIX = "b:"  # id prefix of B's added nodes, and of tensors only B has


def merged_model(diff: ModelDiff) -> tuple[Model, dict[str, str]]:
    """The merged Model and each of its node ids' status."""
    a, b = diff.a.graph, diff.b.graph
    b_to_a_value = {vb: va for va, vb in diff.value_map().items()}
    nodes: list[Node] = []
    statuses: dict[str, str] = {}
    for node in a.nodes:
        nodes.append(replace(node, index=len(nodes)))
        entry = diff.by_a.get(node.id)
        statuses[node.id] = entry.status if entry is not None else "matched"
    copies = {node.id: nodes[i] for i, node in enumerate(a.nodes)}

    def name_in_a(vb: str) -> str:
        return b_to_a_value.get(vb) or (ADDED_PREFIX + vb if vb else "")

    added = [e.b for e in diff.nodes if e.status == "added" and e.b is not None]
    added_outputs: dict[str, Node] = {}
    for node in added:
        copy = replace(node, id=ADDED_PREFIX + node.id, index=len(nodes),
                       inputs=tuple(name_in_a(v) for v in node.inputs),
                       outputs=tuple(name_in_a(v) for v in node.outputs),
                       name=_scoped(node, diff, b), subgraphs=NO_BODIES)
        nodes.append(copy)
        statuses[copy.id] = "added"
        for v in node.outputs:
            if v:
                added_outputs[v] = copy
    for v, _producer in added_outputs.items():  # paired readers also read the new path
        for reader in b.values[v].consumers:
            entry = diff.by_b.get(b.nodes[reader].id)
            if entry is not None and entry.a is not None:
                target = copies[entry.a.id]
                if ADDED_PREFIX + v not in target.inputs:
                    target.inputs += (ADDED_PREFIX + v,)
    graph = _graph(a, b, nodes)
    return replace(diff.a, graph=graph, derived={}), statuses


def _scoped(node: Node, diff: ModelDiff, b: Graph) -> str:
    """B's node name under the scope of the first paired neighbour's A name."""
    leaf = node.name.rsplit("/", 1)[-1] or node.op_type
    for v in (*node.outputs, *node.inputs):
        value = b.values.get(v) if v else None
        if value is None:
            continue
        for j in (*value.consumers, value.producer):
            entry = diff.by_b.get(b.nodes[j].id) if j is not None else None
            if entry is not None and entry.a is not None and "/" in entry.a.name:
                return entry.a.name.rsplit("/", 1)[0] + "/" + leaf
    return node.name


def _graph(a: Graph, b: Graph, nodes: list[Node]) -> Graph:
    graph = Graph(name=a.name, id_prefix="", nodes=nodes, inputs=list(a.inputs),
                  outputs=list(a.outputs), initializers=dict(a.initializers),
                  captured=list(a.captured), doc_string=a.doc_string)
    values = graph.values
    for name in (*a.inputs, *a.initializers):
        source = a.values[name]
        values[name] = Value(name, source.type, source.kind)
    reads: dict[str, list[int]] = {}
    for node in nodes:
        for name in node.inputs:
            if name:
                _value(values, name, a, b)
                reads.setdefault(name, []).append(node.index)
        for name in node.outputs:
            if name:
                _value(values, name, a, b).producer = node.index
    for name, read in reads.items():
        values[name].consumers = tuple(read)
    dismantle(reads)  # dropped at once, dag100k's lists held the GIL ~20 ms
    for name in a.outputs:
        _value(values, name, a, b).kind = "output"
    for name in [n for n, v in values.items() if n.startswith(ADDED_PREFIX)]:
        original = name[len(ADDED_PREFIX):]
        if original in b.initializers:
            graph.initializers[name] = replace(b.initializers[original], name=name)
            values[name].kind = "initializer"
    return graph


def _value(values: dict[str, Value], name: str, a: Graph, b: Graph) -> Value:
    value = values.get(name)
    if value is None:
        source = a.values.get(name)
        if source is None and name.startswith(ADDED_PREFIX):
            source = b.values.get(name[len(ADDED_PREFIX):])
        value = values[name] = Value(name, source.type if source is not None else
                                     Value(name).type)
    return value
