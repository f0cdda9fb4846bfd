"""What is expanded: scope groups by id, and nodes whose bodies are shown in place.

The default (``default_state``): a graph with at most ``EXPAND_ALL_LIMIT`` boxes opens
with every scope group expanded (ResNet-50, BERT-96 and the like: everything visible);
a larger one opens breadth-first, expanding whole levels of groups while the number of
visible boxes stays within ``VISIBLE_BUDGET`` (a 100k-node DAG opens as its blocks).
Control-flow bodies and local-function calls start collapsed, as one expandable box.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from onnxstudio.layout.scopes import CACHE_GROUP, ScopeGroup, graph_scope_tree
from onnxstudio.model.graph import Graph

Functions = dict[tuple[str, str], Graph]
_CALLS = attrgetter("function")

EXPAND_ALL_LIMIT = 10_000
VISIBLE_BUDGET = 1_500


@dataclass
class ExpandState:
    """Expanded scope-group ids and in-place-expanded node ids (If/Loop/Scan, calls)."""

    groups: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)

    def copy(self) -> ExpandState:
        return ExpandState(set(self.groups), set(self.nodes))

    def toggle(self, group_id: str) -> None:
        """Flip a scope group; an in-place frame's id ``<node id>/*`` flips that node."""
        if group_id.endswith("/*"):
            self.nodes.symmetric_difference_update({group_id[:-2]})
        else:
            self.groups.symmetric_difference_update({group_id})

    def expand_all(self, graph: Graph, bodies: bool = False,
                   functions: Functions | None = None, _prefix: str = "") -> None:
        """Expand every scope group; with ``bodies``, control-flow bodies too, and with
        ``functions`` ((domain, name) -> body), local-function calls (recursively)."""
        # Expand All runs on the GUI thread: the groups are walked through the tree's
        # kept split of each group's children (``ScopeGroup.groups`` looks at every box:
        # 24 ms of dag100k), the few nodes with bodies or calls are found in C
        tree = graph_scope_tree(graph)
        stack = [tree.root]
        while stack:
            inner = tree.part(stack.pop())[1]
            self.groups.update(_prefix + g.id for g in inner)
            stack += inner
        for node in graph.nesting() if bodies else ():
            self.nodes.add(_prefix + node.id)
            for body in node.subgraphs.values():
                self.expand_all(body, bodies, functions, _prefix)
        for node in filter(_CALLS, graph.nodes) if functions else ():
            callee = functions.get(node.function)  # type: ignore[union-attr, arg-type]
            if callee is not None and _prefix.count("/") < 64:
                call = _prefix + node.id
                self.nodes.add(call)
                self.expand_all(callee, bodies, functions, call + "/")

    def collapse_all(self) -> None:
        self.groups.clear()
        self.nodes.clear()

    def reveal(self, graph: Graph, node_id: str, functions: Functions | None = None) -> None:
        """Expand whatever hides ``node_id``: its groups, the bodies that hold it, and
        (given ``functions``) the calls it sits in (ids ``<call id>/<function node id>``)."""
        tree = graph_scope_tree(graph)
        if node_id in tree.group_of:
            self.groups.update(g.id for g in tree.ancestors(node_id))
            return
        for node in graph.nodes:
            for body in node.subgraphs.values():
                if body.id_prefix and node_id.startswith(body.id_prefix):
                    self.reveal(graph, node.id, functions)
                    self.nodes.add(node.id)
                    self.reveal(body, node_id, functions)
                    return
            callee = functions.get(node.function) if functions and node.function else None
            if callee is not None and node_id.startswith(node.id + "/"):
                self.reveal(graph, node.id, functions)
                self.nodes.add(node.id)
                inner = ExpandState()
                inner.reveal(callee, node_id[len(node.id) + 1:], functions)
                self.groups.update(f"{node.id}/{g}" for g in inner.groups)
                self.nodes.update(f"{node.id}/{n}" for n in inner.nodes)
                return


def default_state(graph: Graph) -> ExpandState:
    """The state a model opens with; see the module docstring for the rule."""
    tree = graph_scope_tree(graph)
    state = ExpandState()
    total = len(tree.group_of)
    if total <= EXPAND_ALL_LIMIT:
        state.groups.update(g.id for g in tree.root.groups() if g.label != CACHE_GROUP
                            or g.parent is not tree.root)
        return state
    level: list[ScopeGroup] = [tree.root]
    visible = len(tree.root.children)
    while level:
        children = [c for g in level for c in g.children if isinstance(c, ScopeGroup)]
        grow = sum(len(c.children) - 1 for c in children)
        if not children or visible + grow > VISIBLE_BUDGET:
            break
        state.groups.update(c.id for c in children)
        visible += grow
        level = children
    return state


def shown_as(graph: Graph, state: ExpandState, box_id: str) -> str:
    """The box standing for ``box_id`` when ``state`` is drawn: the outermost collapsed
    group holding it, or itself (what a panel following a collapse should show)."""
    for group in reversed(graph_scope_tree(graph).ancestors(box_id)):
        if group.id not in state.groups:
            return group.id
    return box_id
