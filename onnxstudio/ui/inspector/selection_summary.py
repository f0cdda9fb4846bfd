"""What the Node panel shows for several boxes, or for a collapsed group: a summary.

Counts by operator type, the tensors entering and leaving, and the members (each a
link that reveals it on the canvas). Kept out of node_panel.py, which shows one node.
"""

from __future__ import annotations

import html
from collections import Counter

from onnxstudio.layout.scope_shape import leaves
from onnxstudio.layout.scopes import graph_scope_tree
from onnxstudio.model.formatting import human_bytes, plural
from onnxstudio.model.graph import Model, Node
from onnxstudio.model.index import ModelIndex
from onnxstudio.ui.inspector.property_tree import PropertyTree

MAX_MEMBER_ROWS = 40
MAX_TENSOR_ROWS = 20


def selected_nodes(model: Model, index: ModelIndex, box_ids: list[str]) -> list[Node]:
    """The operators behind ``box_ids``: nodes themselves, and every node of a group."""
    tree = graph_scope_tree(model.graph)
    out: dict[str, Node] = {}
    for box_id in box_ids:
        group = tree.by_id.get(box_id)
        ids = leaves(group) if group is not None else [box_id]
        for node_id in ids:
            node = index.node(node_id)
            if node is not None:
                out[node.id] = node
    return list(out.values())


def group_label(model: Model, box_id: str) -> str | None:
    group = graph_scope_tree(model.graph).by_id.get(box_id)
    return group.label if group is not None and box_id != "/" else None


def summary_header(model: Model, box_ids: list[str], nodes: list[Node]) -> str:
    label = group_label(model, box_ids[0]) if len(box_ids) == 1 else None
    what = f"group <b>{html.escape(label)}</b>" if label else f"{len(box_ids)} boxes selected"
    count = plural(len(nodes), "node")
    return f"<span style='font-size:14px'>{what}</span><br>{count}"


def fill_summary(tree: PropertyTree, model: Model, nodes: list[Node]) -> None:
    """Sections: operators by type, tensors in and out of the selection, members."""
    ops = Counter(n.op_type for n in nodes)
    section = tree.add_section("Operators", len(ops))
    for op, count in ops.most_common():
        tree.add_row(section, op, f"× {count}")
    produced = {o for n in nodes for o in n.outputs if o}
    read = {i for n in nodes for i in n.inputs if i}
    inits = model.graph.initializers
    entering = sorted(read - produced - set(inits))
    inside = {n.index for n in nodes}
    leaving = sorted(o for o in produced if _read_outside(model, o, inside))
    for title, names in (("Tensors in", entering), ("Tensors out", leaving)):
        if not names:
            continue
        part = tree.add_section(title, len(names))
        for name in names[:MAX_TENSOR_ROWS]:
            value = model.graph.values.get(name)
            tree.add_row(part, name, value.type.describe() if value is not None else "")
        if len(names) > MAX_TENSOR_ROWS:
            tree.add_row(part, f"… {len(names) - MAX_TENSOR_ROWS} more", muted=True)
    weights = sum(inits[i].nbytes for i in read if i in inits)
    if weights:
        tree.add_row(tree.add_section("Weights"), "Size", human_bytes(weights))
    members = tree.add_section("Members", len(nodes))
    for node in nodes[:MAX_MEMBER_ROWS]:
        tree.add_row(members, node.op_type, node.name or node.id, link=f"node:{node.id}",
                     tooltip=f"Show {node.name or node.id} in the graph")
    if len(nodes) > MAX_MEMBER_ROWS:
        tree.add_row(members, f"… {len(nodes) - MAX_MEMBER_ROWS} more", muted=True)


def _read_outside(model: Model, name: str, inside: set[int]) -> bool:
    """Whether ``name`` is a graph output or read by a node outside the selection."""
    if name in model.graph.outputs:
        return True
    value = model.graph.values.get(name)
    return value is not None and any(c not in inside for c in value.consumers)
