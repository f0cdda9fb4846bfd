"""Compound (hierarchical) layout: each expanded group is laid out on its own, bottom-up.

A collapsed group is one box; an expanded one is laid out by ``layout_dag`` and then
becomes one sized item of its parent's layout. An edge whose ends sit in different
groups is split at the groups it leaves and enters: inside each such group it runs to
the group's exit for that tensor's producer (or from its entry), a zero-size port item
on the group's last (first) layer; at the lowest common group it joins the two items
that hold its ends. The parent attaches its edges to a child group exactly at those
ports, so the pieces join into one polyline. Work is proportional to what is visible:
a collapsed group's contents are never laid out.

Ids: boxes are node ids, ``in:<value>``/``out:<value>`` (prefixed by the body's id
prefix inside bodies) or a collapsed group's id; frames are scope ids
(``/encoder/layer.3``), chunk ids (``/encoder/#2``), ``<node id>/*`` for a node shown
with its bodies in place, and ``<node id>/<attribute>`` for each body (``<call id>/``
prefixes everything inside a local-function call, which may be expanded many times).

Everything is computed top-to-bottom; left-to-right is the same drawing transposed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.layout import labels, sizing, unit_place
from onnxstudio.layout.assemble import join_routes, make_edges, place_items, transpose
from onnxstudio.layout.batch import layout_dags
from onnxstudio.layout.box_looks import GraphLooks, graph_looks
from onnxstudio.layout.edge_collect import EdgeCollector
from onnxstudio.layout.edge_split import split_edges
from onnxstudio.layout.layered import DagResult, LayoutCancelled
from onnxstudio.layout.scopes import CACHE_GROUP, ScopeGroup, ScopeTree, graph_scope_tree
from onnxstudio.layout.sides import apply_side_moves, move_route_ends, side_moves
from onnxstudio.layout.state import ExpandState
from onnxstudio.layout.types import Box, Direction, Layout
from onnxstudio.layout.units import Unit
from onnxstudio.model.formatting import plural
from onnxstudio.model.graph import Graph, Model, Node

FRAME_LABEL_PAD = 26.0  # room above a group's content for its label
FRAME_PAD = 12.0
SIDE_SOURCES = True  # move far-reaching side inputs beside the column (sides.py)

__all__ = ["LayoutCancelled", "build_layout"]

Functions = dict[tuple[str, str], Graph]
_NEW = object.__new__


@dataclass(eq=False)
class _Body:
    """One graph being shown (main graph, a body, a function instance) and its id prefix."""

    graph: Graph
    prefix: str  # "" except for function instances, whose ids get "<call id>/"
    tree: ScopeTree
    folded: dict[str, str]
    owner: str | None  # box id of the node whose body this is
    outer: _Body | None
    looks: GraphLooks | None = None  # its nodes and their boxes' looks, kept per graph

    def box_id(self, node: Node) -> str:
        return self.prefix + node.id


def _pid(prefix: str, leaf: str) -> str:
    """Instance id of a tree leaf: the prefix goes after an ``in:``/``out:`` marker."""
    if not prefix:
        return leaf
    if leaf.startswith(("in:", "out:")):
        kind, rest = leaf.split(":", 1)
        return f"{kind}:{prefix}{rest}"
    return prefix + leaf


class _Builder(EdgeCollector):
    def __init__(self, state: ExpandState, functions: Functions, swap: bool) -> None:
        self.state = state
        self.functions = functions
        self.swap = swap
        self.boxes: dict[str, Box] = {}
        self.units: dict[str, Unit] = {}
        self.parent: dict[str, Unit] = {}  # item id -> unit holding it
        self.vis: dict[str, str] = {}  # box id -> visible item standing for it (edge_collect)
        self.hidden: dict[tuple[str, int], str] = {}  # (prefix, id(group)) -> collapsed box
        self.edges: dict[tuple[str, str, str], str] = {}  # (src, dst, value) -> label
        self.bodies: list[tuple[_Body, dict[str, Node]]] = []  # edges collected at the end
        # Every layer of a transformer repeats the same boxes and nesting: sizes and
        # chains of enclosing units are computed once each.
        self._sizes: dict[tuple[str, tuple[str, ...]], tuple[float, float]] = {}
        self._chains: dict[str, list[tuple[Unit, str]]] = {}

    # -- structure -------------------------------------------------------------------

    def _box(self, box: Box, unit: Unit) -> None:
        if self.swap:
            box.width, box.height = box.height, box.width
        self.boxes[box.id] = box
        unit.items.append(box.id)
        self.parent[box.id] = unit

    def _unit(self, uid: str, label: str, kind: str, count: int, parent: Unit | None) -> Unit:
        unit = Unit(uid, label, kind, count, parent, 0 if parent is None else parent.depth + 1,
                    len(self.units))
        self.units[uid] = unit
        if parent is not None:
            parent.items.append(uid)
            self.parent[uid] = parent
        return unit

    def add_body(self, body: _Body, unit: Unit) -> None:
        body.looks = graph_looks(body.graph, body.folded)
        self._add_group(body.tree.root, body, unit)
        self.bodies.append((body, body.looks.nodes))

    def _add_group(self, group: ScopeGroup, body: _Body, unit: Unit) -> None:
        """``group``'s children as items of ``unit``, in order: an expanded group as a
        unit of its own, a collapsed one as its box, an operator as its box. A plain
        operator (no body, no function call: nearly all) gets its look inline, its
        type's for most (``box_looks``), and a new Box with its slots set (calling the
        dataclass was two thirds of the walk on dag100k)."""
        pre = body.prefix
        shown = body.looks
        assert shown is not None
        nodes, special, weights = shown.nodes, shown.special, shown.weights
        kinds, looks = shown.kinds, shown.looks
        boxes, items, parent, vis, swap = self.boxes, unit.items, self.parent, self.vis, \
            self.swap
        for child in group.children:
            if type(child) is str:
                node = nodes.get(child)
                if node is None or child in special:
                    self._add_leaf(child, node, body, unit)
                    continue
                op = node.op_type
                if node.attributes or node.domain or (
                        weights and not weights.isdisjoint(node.inputs)):
                    look = looks.get(child) or shown.own_look(node, body.graph)
                else:
                    look = kinds.get(op) or shown.kind(op)
                bid = pre + child if pre else child  # a node's id: no in:/out: marker
                box = _NEW(Box)  # every slot set below (box_looks.BOX_SLOTS)
                box.id = bid
                box.kind = "node"
                box.x = box.y = 0
                box.details, box.category, w, h = look
                if swap:
                    w, h = h, w
                box.width = w
                box.height = h
                box.title = op
                box.subtitle = node.name
                box.expandable = False
                boxes[bid] = box
                items.append(bid)
                parent[bid] = unit
                vis[bid] = bid
                continue
            if not isinstance(child, ScopeGroup):
                self._add_leaf(child, nodes.get(child), body, unit)
                continue
            gid = pre + child.id
            if gid in self.state.groups:
                sub = self._unit(gid, child.label, child.kind, child.node_count, unit)
                self._add_group(child, body, sub)
                continue
            title = child.label
            sub_text = plural(child.node_count, "node") if child.node_count or \
                child.label != CACHE_GROUP else plural(len(child.children), "input")
            w, h = sizing.group_box_size(title, sub_text)
            self._box(Box(gid, "group", 0, 0, w, h, title, sub_text, category="group",
                          expandable=True), unit)
            self._hide(child, body, gid)

    def _add_leaf(self, leaf: str, node: Node | None, body: _Body, unit: Unit) -> None:
        """One box id of a group: a graph input or output, an operator (which may show
        its bodies or called function in place)."""
        pre = body.prefix
        bid = _pid(pre, leaf) if pre else leaf
        if node is None:
            self._io_box(bid, body, unit)
            return
        self.vis[bid] = bid
        box = self._node_box(node, body, bid)
        callee = self.functions.get(node.function) if node.function else None
        if (node.subgraphs or callee is not None) and bid in self.state.nodes:
            frame = self._unit(bid + "/*", node.label, "function" if callee else "subgraph",
                               0, unit)
            box.expandable = False  # shown open: its frame's title folds it back
            self._box(box, frame)
            bodies = [(k, g, pre, "subgraph") for k, g in node.subgraphs.items()]
            if callee is not None:
                bodies.append((callee.name, callee, bid + "/", "function"))
            for key, graph, prefix, kind in bodies:
                sub_body = _Body(graph, prefix, graph_scope_tree(graph),
                                 labels.folded_constants(graph), bid,
                                 body if kind == "subgraph" else None)
                root_id = prefix + sub_body.tree.root.id
                sub = self._unit(root_id, key, kind, graph.node_count_total(), frame)
                frame.node_count += sub.node_count
                # an undrawn link keeps each body below the node it belongs to
                frame.edges[(bid, sub.id, "")] = 1
                self.add_body(sub_body, sub)
        else:
            self._box(box, unit)

    def _io_box(self, bid: str, body: _Body, unit: Unit) -> None:
        kind = "input" if bid.startswith("in:") else "output"
        name = bid.split(":", 1)[1][len(body.prefix) + len(body.graph.id_prefix):]
        value = body.graph.values.get(name)
        details = (labels.type_text(value.type),) if value is not None else ()
        w, h = sizing.box_size(name, details)
        self.vis[bid] = bid
        self._box(Box(bid, kind, 0, 0, w, h, name, "", details, category="io"), unit)  # type: ignore[arg-type]

    def _node_box(self, node: Node, body: _Body, bid: str) -> Box:
        assert body.looks is not None
        lines, category, w, h = body.looks.look(node, body.graph)
        expandable = bool(node.subgraphs) or (
            node.function is not None and node.function in self.functions)
        if expandable:
            w, h = self._marked_size(node.op_type, lines)
        return Box(bid, "node", 0, 0, w, h, node.op_type, node.name, lines, category,
                   expandable)

    def _marked_size(self, title: str, details: tuple[str, ...]) -> tuple[float, float]:
        """The size of an expandable operator's box (its title beside a + marker)."""
        key = (title, details)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = sizing.box_size(title, details, marker=True)
        return size

    def _chain(self, item: str) -> list[tuple[Unit, str]]:
        """(unit, item of that unit holding ``item``) from innermost to the root."""
        out = self._chains.get(item)
        if out is None:
            unit = self.parent.get(item)
            out = [] if unit is None else [(unit, item), *self._chain(unit.id)]
            self._chains[item] = out
        return out

    # -- geometry ----------------------------------------------------------------------

    def layout_units(self, cancel: Callable[[], bool] | None,
                     progress: Callable[[float], None] | None) -> None:
        """Deepest units first; the units of one depth are independent of each other (a
        unit needs only its sub-units' sizes and ports), so they are laid out together
        (``batch.layout_dags``: many new ones at once as numpy steps)."""
        by_depth: dict[int, list[Unit]] = {}
        for unit in self.units.values():
            by_depth.setdefault(unit.depth, []).append(unit)
        pad_l, pad_t = (FRAME_LABEL_PAD, FRAME_PAD) if self.swap else (FRAME_PAD, FRAME_LABEL_PAD)
        done = 0
        for depth in sorted(by_depth, reverse=True):
            if cancel is not None and cancel():
                raise LayoutCancelled
            group = by_depth[depth]
            inputs = [unit_place.dag_inputs(unit, self.units, self.boxes) for unit in group]
            # each unit placed as its result comes: the workers lay out the rest meanwhile
            layout_dags([a for _, _, a in inputs], cancel,
                        partial(self._place_at, group, inputs, pad_l, pad_t))
            done += len(group)
            if progress is not None:
                progress(done / max(1, len(self.units)))

    def _place_at(self, group: list[Unit],
                  inputs: list[tuple[list[unit_place.Key], unit_place.Ports,
                                     unit_place.DagInputs]],
                  pad_l: float, pad_t: float, i: int, res: DagResult) -> None:
        unit = group[i]
        keys, ports, _ = inputs[i]
        self._place_unit(unit, res, keys, ports, pad_l if unit.parent else 0.0,
                         pad_t if unit.parent else 0.0)

    def _place_unit(self, unit: Unit, res: DagResult, keys: list[unit_place.Key],
                    ports: unit_place.Ports, pad_l: float, pad_t: float) -> None:
        pad_r = FRAME_PAD if unit.parent else 0.0
        unit.width = res.width + pad_l + pad_r
        unit.height = res.height + pad_t + pad_r
        # A frame is at least as wide on screen as its title row (the screen's across
        # axis is x here, or the flow axis y when the drawing is transposed to LR).
        need = sizing.frame_title_width(unit.label, unit.node_count) if unit.parent else 0.0
        ox = 0.0
        if self.swap:
            unit.height = max(unit.height, need)
        elif need > unit.width:
            ox, unit.width = (need - unit.width) / 2, need
        unit_place.place(unit, res, keys, ports, pad_l + ox, pad_t)


def build_layout(
    graph: Graph | Model,
    state: ExpandState | None = None,
    direction: Direction = "TB",
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[float], None] | None = None,
    *,
    functions: Functions | None = None,
) -> Layout:
    """Lay out ``graph`` as ``state`` expands it (None: ``default_state``).

    ``graph`` may be a Model: its main graph is drawn and its local functions can expand
    in place; otherwise ``functions`` maps (domain, name) to function bodies.
    Raises LayoutCancelled when ``cancel()`` turns true (checked between groups).
    """
    if isinstance(graph, Model):
        functions = {f.key: f.body for f in graph.functions} if functions is None else functions
        graph = graph.graph
    if state is None:
        from onnxstudio.layout.state import default_state

        state = default_state(graph)
    builder = _Builder(state, functions or {}, swap=direction == "LR")
    tree = graph_scope_tree(graph)
    root = builder._unit(tree.root.id, graph.name, "scope", len(tree.group_of), None)
    builder.add_body(_Body(graph, "", tree, labels.folded_constants(graph), None, None), root)
    pieces = split_edges(builder.collect_edges(), builder.units, builder.parent,
                         builder._chain)
    builder.layout_units(cancel, progress)
    boxes, frames, origin = place_items(builder.units, builder.boxes, root)
    moves = side_moves(boxes, frames, pieces.sources, pieces.targets, set(root.items),
                       pieces.codes) \
        if SIDE_SOURCES else None
    routes = join_routes(pieces, list(builder.units.values()), origin)
    move_route_ends(routes.xy, routes.starts, pieces.sources, pieces.targets, boxes, moves)
    edges = make_edges(pieces, routes, swap=direction == "LR")
    layout = Layout("TB", root.width, root.height, boxes, frames, edges)
    dismantle(builder, pieces)
    apply_side_moves(layout, moves)
    if direction == "LR":
        layout = transpose(layout)
    if progress is not None:
        progress(1.0)
    return layout
