"""Which edges a compound layout draws (build.py's builder collects them through this
mixin): each tensor from the box showing its producer to the box showing its reader,
where a box is a node, a graph input/output, or a collapsed group standing for all it
hides; edges inside one box are left out, and each (source, target, tensor) is kept
once, in graph order, with its shape text.
"""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs, list_in_runs
from onnxstudio.layout import labels
from onnxstudio.layout.edge_arrays import EdgeLists, whole_graph_edges
from onnxstudio.layout.scopes import ScopeGroup, graph_links
from onnxstudio.layout.state import ExpandState
from onnxstudio.model.graph import Node

if TYPE_CHECKING:
    from onnxstudio.layout.build import _Body


def _leaf(prefix: str, box: str) -> str | None:
    """The tree leaf whose instance id (_pid) under ``prefix`` is ``box``, if any."""
    if not prefix:
        return box
    if box.startswith(("in:", "out:")):
        kind, rest = box.split(":", 1)
        return f"{kind}:{rest[len(prefix):]}" if rest.startswith(prefix) else None
    return box[len(prefix):] if box.startswith(prefix) else None


class EdgeCollector:
    """The edge half of build.py's _Builder, which sets these up."""

    state: ExpandState
    vis: dict[str, str]  # box id -> visible item: shown ones, hidden ones as edges need
    hidden: dict[tuple[str, int], str]  # (prefix, id(group)) -> collapsed box
    edges: dict[tuple[str, str, str], str]  # (src, dst, value) -> label
    bodies: list[tuple[_Body, dict[str, Node]]]  # the bodies shown

    def collect_edges(self) -> EdgeLists:
        """The drawn edges: on arrays when one graph is shown box for box (edge_arrays),
        else walked per body into ``edges``."""
        if self._on_arrays():
            return whole_graph_edges(self.bodies[0][0], self.vis)
        for body, nodes in self.bodies:
            self._collect_edges(body, nodes)
        edges = self.edges
        return EdgeLists(list_in_runs(map(itemgetter(0), edges)),
                         list_in_runs(map(itemgetter(1), edges)),
                         list_in_runs(map(itemgetter(2), edges)), list_in_runs(edges.values()))

    def _on_arrays(self) -> bool:
        """Whether one graph is shown box for box: no collapsed group, no body shown or
        only collapsed ones (with no captured values to draw), no call's prefix."""
        if len(self.bodies) != 1 or self.hidden:
            return False
        body = self.bodies[0][0]
        return not body.prefix and not graph_links(body.graph).nested

    def _hide(self, group: ScopeGroup, body: _Body, gid: str) -> None:
        """``gid`` shows everything inside ``group``: recorded per group, and read through
        the scope tree when an edge needs it (_wired, _hider), instead of per box (the
        100k boxes of dag100k hidden in 1,251 groups: 50 ms of dict stores)."""
        self.hidden[(body.prefix, id(group))] = gid

    def _hider(self, box: str) -> str | None:
        """The collapsed group hiding ``box`` (in the body whose prefix and tree hold it),
        for a box ``vis`` lacks; None when it is not shown."""
        for body, _nodes in self.bodies:
            leaf = _leaf(body.prefix, box)
            group = body.tree.group_of.get(leaf) if leaf is not None else None
            while group is not None:
                hider = self.hidden.get((body.prefix, id(group)))
                if hider is not None:
                    return hider
                group = group.parent
        return None

    def _collect_edges(self, body: _Body, nodes: dict[str, Node]) -> None:
        graph = body.graph
        pre = body.prefix
        gp = pre + graph.id_prefix
        values = graph.values
        graph_nodes = graph.nodes
        inputs = set(graph.inputs)
        folded = body.folded
        add = self._add_edge
        for node in self._wired(body):
            if labels.is_folded(node, folded):
                continue
            dst = pre + node.id
            for name in node.inputs:
                if not name or name in folded:
                    continue
                value = values.get(name)
                if value is None:
                    continue
                if value.producer is not None:
                    add(pre + graph_nodes[value.producer].id, dst, name, value.type)
                elif name in inputs:
                    add(f"in:{gp}{name}", dst, name, value.type)
                elif value.kind == "captured":
                    src = self._resolve(body.outer, name)
                    if src is not None:
                        add(src, dst, name, value.type)
            if node.subgraphs and dst in self.state.nodes:
                continue  # expanded: captured values are drawn to their inner readers
            for sub in node.subgraphs.values():
                for name in sub.captured:
                    src = self._resolve(body, name)
                    if src is not None:
                        add(src, dst, name, None)
        for name in graph.inputs:
            if body.owner is not None:
                add(body.owner, f"in:{gp}{name}", name, values[name].type)
        for name in graph.outputs:
            value = values.get(name)
            if value is None:
                continue
            if value.producer is not None:
                add(pre + graph_nodes[value.producer].id, f"out:{gp}{name}", name, value.type)
            elif name in inputs:
                add(f"in:{gp}{name}", f"out:{gp}{name}", name, value.type)

    def _wired(self, body: _Body) -> list[Node]:
        """The nodes, in graph order, that may have an edge drawn into them: all but those
        whose inputs all come from nodes shown by the same box (inside one collapsed
        group: 9 in 10 nodes of dag100k as it opens). Found on arrays; the rest of the
        edge collection then walks only these. The hidden nodes it will look up (theirs
        and their inputs' producers) get their collapsed box in ``vis`` on the way."""
        graph_nodes = body.graph.nodes
        if not self.hidden:
            return graph_nodes  # every node its own box (bert96 as it opens): all may be
        code: dict[int, int] = {}  # id(group) -> index into boxes: the collapsed box
        boxes: list[str] = []
        stack = [(body.tree.root, -1)]
        while stack:
            group, shown = stack.pop()
            gid = self.hidden.get((body.prefix, id(group))) if shown < 0 else None
            if gid is not None:
                shown = len(boxes)
                boxes.append(gid)
            code[id(group)] = shown
            stack += ((g, shown) for g in body.tree.part(group)[1])
        ids = [n.id for n in graph_nodes]
        hider = fromiter_in_runs(map(code.get, map(id, map(body.tree.group_of.get, ids)),
                                     repeat(-1)), np.int64, len(ids))
        shown_by = np.where(hider >= 0, hider, np.arange(len(boxes), len(boxes) + len(ids)))
        links = graph_links(body.graph)
        src, dst = links.src, links.dst
        wired = np.zeros(len(ids) + 1, dtype=bool)
        wired[dst[shown_by[src] != shown_by[dst]]] = True
        wired[links.free] = True  # inputs, weights and captured values
        wired[links.nested] = True
        at = np.flatnonzero(wired[:-1])
        ends = np.union1d(at, src[wired[dst]])
        ends = ends[hider[ends] >= 0]
        self.vis.update(zip([body.prefix + ids[i] for i in ends.tolist()],
                            [boxes[c] for c in hider[ends].tolist()], strict=True))
        return [graph_nodes[i] for i in at.tolist()]

    def _resolve(self, body: _Body | None, name: str) -> str | None:
        """Box id producing ``name`` in ``body`` or the graphs enclosing it."""
        while body is not None:
            graph = body.graph
            value = graph.values.get(name)
            if value is not None and value.kind != "captured":
                if value.producer is not None:
                    return body.prefix + graph.nodes[value.producer].id
                if name in graph.inputs:
                    return f"in:{body.prefix}{graph.id_prefix}{name}"
                return None
            body = body.outer
        return None

    def _add_edge(self, src: str, dst: str, value: str, vtype: object) -> None:
        s = self.vis.get(src)
        d = self.vis.get(dst)
        if self.hidden:
            s = s if s is not None else self._hider(src)
            d = d if d is not None else self._hider(dst)
        if s is None or d is None or s == d:
            return
        key = (s, d, value)
        if key not in self.edges:
            shape = getattr(vtype, "shape", None)
            self.edges[key] = labels.shape_text(vtype) if shape is not None else ""  # type: ignore[arg-type]

    # -- edges to unit pieces ----------------------------------------------------------
