"""The scope tree: collapsible groups derived from node names or exporter metadata.

Exporters encode the module hierarchy in node names (``/encoder/layer.3/attention/MatMul``,
``encoder.layer.3.attention.MatMul``, ``a::b::c``); the dynamo exporter names nodes
flatly (``node_MatMul_297``) and records the scopes in ``pkg.torch.onnx.name_scopes`` or
``namespace`` metadata instead. Groups with a single child are merged away, and groups
with too many direct children are split into ordered chunks so that every group stays
small enough to lay out (and read) at once.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from onnxstudio.model.graph import Graph, Node

GroupKind = Literal["scope", "chunk", "subgraph", "function"]

CHUNK_MAX = 120
"""A group with more direct children than this is split into ordered chunks."""

_NUMERIC = re.compile(r"^\d+$")


def _join_numeric(parts: list[str]) -> list[str]:
    """``layer``, ``3`` -> ``layer.3``: a numeric component belongs to the one before."""
    out: list[str] = []
    for part in parts:
        if out and _NUMERIC.match(part):
            out[-1] = f"{out[-1]}.{part}"
        else:
            out.append(part)
    return out


def _metadata_scopes(metadata: dict[str, str]) -> tuple[str, ...]:
    raw = metadata.get("pkg.torch.onnx.name_scopes")
    if raw:
        try:
            scopes = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            scopes = None
        if isinstance(scopes, list) and scopes and all(isinstance(s, str) for s in scopes):
            # Entries are full dotted module paths ending with the node itself:
            # ['', 'encoder', 'encoder.layer.2', ..., 'add_11'].
            path: list[str] = []
            prev = ""
            for full in scopes[:-1]:
                if not full:
                    continue
                short = full[len(prev) + 1:] if prev and full.startswith(prev + ".") else full
                path.append(short)
                prev = full
            return tuple(path)
    raw = metadata.get("namespace")
    if raw:
        # ": Cls/embeddings: Cls/embeddings.word: Emb/embedding: aten.embed"
        names = [part.split(":", 1)[0].strip() for part in raw.split("/")]
        fulls = [n for n in names[:-1] if n]
        path = []
        prev = ""
        for full in fulls:
            short = full[len(prev) + 1:] if prev and full.startswith(prev + ".") else full
            path.append(short)
            prev = full
        return tuple(path)
    return ()


def scope_path(name: str, metadata: dict[str, str] | None = None) -> tuple[str, ...]:
    """The scope components of a node (its own name excluded); () when it has none."""
    if "/" in name:
        parts = [p for p in name.split("/") if p]
        path = tuple(parts[:-1])
    elif "::" in name:
        path = tuple(p for p in name.split("::")[:-1] if p)
    elif "." in name:
        path = tuple(_join_numeric([p for p in name.split(".") if p])[:-1])
    else:
        path = ()
    if not path and metadata:
        path = _metadata_scopes(metadata)
    return path


@dataclass(eq=False)
class ScopeGroup:
    """A collapsible group: scope, chunk of a large flat group, or an expanded body."""

    id: str
    label: str
    kind: GroupKind = "scope"
    parent: ScopeGroup | None = None
    children: list[ScopeGroup | str] = field(default_factory=list)  # groups and box ids
    node_count: int = 0  # operators inside, recursively

    @property
    def depth(self) -> int:
        depth, group = 0, self.parent
        while group is not None:
            depth, group = depth + 1, group.parent
        return depth

    def groups(self) -> Iterator[ScopeGroup]:
        """This group's descendant groups, pre-order (itself excluded)."""
        for child in self.children:
            if isinstance(child, ScopeGroup):
                yield child
                yield from child.groups()


@dataclass(eq=False)
class ScopeTree:
    """Root group plus lookups: box id -> innermost group, group id -> group."""

    root: ScopeGroup
    group_of: dict[str, ScopeGroup]
    by_id: dict[str, ScopeGroup]

    def ancestors(self, box_id: str) -> list[ScopeGroup]:
        """Groups containing ``box_id``, innermost first, root excluded."""
        out: list[ScopeGroup] = []
        group = self.group_of.get(box_id)
        while group is not None and group is not self.root:
            out.append(group)
            group = group.parent
        return out


def _compress(group: ScopeGroup) -> None:
    """Merge single-child chains and lift lone nodes, bottom-up."""
    for i, child in enumerate(group.children):
        if not isinstance(child, ScopeGroup):
            continue
        _compress(child)
        while len(child.children) == 1 and isinstance(child.children[0], ScopeGroup):
            inner = child.children[0]
            inner.label = f"{child.label}/{inner.label}"
            inner.parent = group
            child = inner
        if len(child.children) == 1:
            group.children[i] = child.children[0]  # a group of one node is just that node
        else:
            child.parent = group
            group.children[i] = child


def _leaves(group: ScopeGroup) -> list[str]:
    out: list[str] = []
    stack = [group]
    while stack:
        for child in stack.pop().children:
            if isinstance(child, ScopeGroup):
                stack.append(child)
            else:
                out.append(child)
    return out


def _cyclic_components(n: int, succ: list[set[int]]) -> list[list[int]]:
    """Strongly connected components with more than one member (iterative Tarjan)."""
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for start in range(n):
        if index[start] >= 0:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on[start] = True
        while work:
            v, it = work[-1]
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, iter(sorted(succ[w]))))
                    break
                if on[w]:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on[w] = False
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(comp)
    return comps


def _ancestry(group: ScopeGroup) -> list[ScopeGroup]:
    chain = []
    g: ScopeGroup | None = group
    while g is not None:
        chain.append(g)
        g = g.parent
    return chain[::-1]


def _is_acyclic(n: int, succ: list[set[int]]) -> bool:
    indeg = [0] * n
    for out in succ:
        for j in out:
            indeg[j] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return seen == n


def _untangle(root: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    """Dissolve groups that would make the drawing cyclic.

    A module called twice (ResNet's shared ``relu``) yields a group whose members sit
    at two places of the data flow; drawn as one box it closes a cycle with what runs
    in between. Per level, the groups of each cyclic component are spliced into their
    parent until the level is acyclic. One pass assigns each edge to the group
    where its ends part (cached per pair of innermost groups), so acyclic levels cost
    nothing more.
    """
    group_of: dict[str, ScopeGroup] = {}
    for group in [root, *root.groups()]:
        for child in group.children:
            if not isinstance(child, ScopeGroup):
                group_of[child] = group
    anc: dict[int, list[ScopeGroup]] = {}
    split: dict[tuple[int, int], tuple[ScopeGroup, ScopeGroup | None, ScopeGroup | None]] = {}
    level_edges: dict[int, list[tuple[ScopeGroup | str, ScopeGroup | str]]] = {}
    for a, outs in succ_of.items():
        ga = group_of.get(a)
        if ga is None:
            continue
        for b in outs:
            gb = group_of.get(b)
            if gb is None:
                continue
            key = (id(ga), id(gb))
            hit = split.get(key)
            if hit is None:
                pa = anc.get(id(ga)) or anc.setdefault(id(ga), _ancestry(ga))
                pb = anc.get(id(gb)) or anc.setdefault(id(gb), _ancestry(gb))
                k = 0
                while k + 1 < len(pa) and k + 1 < len(pb) and pa[k + 1] is pb[k + 1]:
                    k += 1
                hit = split[key] = (pa[k], pa[k + 1] if k + 1 < len(pa) else None,
                                    pb[k + 1] if k + 1 < len(pb) else None)
            lca, ca, cb = hit
            if ca is None and cb is None:
                continue  # two operators side by side: cannot close a cycle alone
            level_edges.setdefault(id(lca), []).append((ca or a, cb or b))
    for group in [root, *root.groups()]:
        pairs = level_edges.get(id(group))
        if not pairs:
            continue
        pos = {id(c) if isinstance(c, ScopeGroup) else c: i for i, c in enumerate(group.children)}
        succ: list[set[int]] = [set() for _ in group.children]
        for x, y in pairs:
            i = pos.get(id(x) if isinstance(x, ScopeGroup) else x)
            j = pos.get(id(y) if isinstance(y, ScopeGroup) else y)
            if i is not None and j is not None:
                succ[i].add(j)
        if _is_acyclic(len(succ), succ):
            continue
        _dissolve_cycles(group, succ_of)


def _dissolve_cycles(group: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    for _ in range(64):
        rep: dict[str, int] = {}
        for i, child in enumerate(group.children):
            if isinstance(child, ScopeGroup):
                for leaf in _leaves(child):
                    rep[leaf] = i
            else:
                rep[child] = i
        succ: list[set[int]] = [set() for _ in group.children]
        for a, i in rep.items():
            for b in succ_of.get(a, ()):
                j = rep.get(b)
                if j is not None and j != i:
                    succ[i].add(j)
        dissolve: set[int] = set()
        for comp in _cyclic_components(len(group.children), succ):
            groups = [i for i in comp if isinstance(group.children[i], ScopeGroup)]
            if len(groups) == 1:
                dissolve.add(groups[0])
            else:
                # interleaved modules (lanes feeding each other): none of them is a unit
                dissolve.update(groups)
        if not dissolve:
            return
        spliced: list[ScopeGroup | str] = []
        for i, child in enumerate(group.children):
            if i in dissolve and isinstance(child, ScopeGroup):
                for inner in child.children:
                    if isinstance(inner, ScopeGroup):
                        inner.parent = group
                    spliced.append(inner)
            else:
                spliced.append(child)
        group.children = spliced


def _topological(group: ScopeGroup, succ_of: dict[str, list[str]]) -> None:
    """Reorder a group's children along the data flow (stable: graph order breaks ties),
    so that cutting the list into consecutive chunks cannot create chunk cycles."""
    import heapq

    rep: dict[str, int] = {}
    for i, child in enumerate(group.children):
        for leaf in _leaves(child) if isinstance(child, ScopeGroup) else [child]:
            rep[leaf] = i
    n = len(group.children)
    succ: list[set[int]] = [set() for _ in range(n)]
    for a, i in rep.items():
        for b in succ_of.get(a, ()):
            j = rep.get(b)
            if j is not None and j != i:
                succ[i].add(j)
    indeg = [0] * n
    for out in succ:
        for j in out:
            indeg[j] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, j)
    if len(order) == n:  # acyclic (untangled); otherwise keep graph order
        group.children = [group.children[i] for i in order]


def _chunk(group: ScopeGroup, limit: int, succ_of: dict[str, list[str]]) -> None:
    for child in group.children:
        if isinstance(child, ScopeGroup):
            _chunk(child, limit, succ_of)
    if len(group.children) > limit and succ_of:
        _topological(group, succ_of)
    level = 0
    base = group.id.rstrip("/")
    while len(group.children) > limit:
        items = group.children
        size = -(-len(items) // -(-len(items) // limit))  # even chunks of <= limit
        chunks: list[ScopeGroup | str] = []
        for k in range(0, len(items), size):
            part = items[k:k + size]
            chunk = ScopeGroup(
                id=f"{base}/#{level}.{k // size}" if level else f"{base}/#{k // size}",
                label=f"part {k // size + 1} of {-(-len(items) // size)}",
                kind="chunk", parent=group, children=part,
            )
            for item in part:
                if isinstance(item, ScopeGroup):
                    item.parent = chunk
            chunks.append(chunk)
        group.children = chunks
        level += 1


def _count(group: ScopeGroup, is_op: set[str]) -> int:
    total = 0
    for child in group.children:
        total += _count(child, is_op) if isinstance(child, ScopeGroup) else child in is_op
    group.node_count = total
    return total


def build_scope_tree(
    nodes: list[tuple[str, tuple[str, ...]]],
    head: list[str] = (),  # type: ignore[assignment]
    tail: list[str] = (),  # type: ignore[assignment]
    *,
    root_id: str = "",
    limit: int = CHUNK_MAX,
    edges: dict[str, list[str]] | None = None,
) -> ScopeTree:
    """Tree over ``(box id, scope path)`` pairs in graph order; head/tail boxes sit at root."""
    root = ScopeGroup(id=root_id or "/", label="", kind="scope")
    index: dict[tuple[str, ...], ScopeGroup] = {(): root}
    root.children.extend(head)
    prefix = root_id.rstrip("/")
    for box_id, path in nodes:
        group = index.get(path)
        if group is None:
            depth = len(path)
            while depth and path[:depth] not in index:
                depth -= 1
            group = index[path[:depth]]
            for k in range(depth, len(path)):
                sub = ScopeGroup(
                    id=prefix + "/" + "/".join(path[:k + 1]), label=path[k], parent=group)
                group.children.append(sub)
                index[path[:k + 1]] = group = sub
        group.children.append(box_id)
    root.children.extend(tail)
    if edges:
        _untangle(root, edges)
    _compress(root)
    _chunk(root, limit, edges or {})
    is_op = {box_id for box_id, _ in nodes}
    _count(root, is_op)
    group_of: dict[str, ScopeGroup] = {}
    by_id: dict[str, ScopeGroup] = {root.id: root}
    stack = [root]
    while stack:
        group = stack.pop()
        for child in group.children:
            if isinstance(child, ScopeGroup):
                by_id[child.id] = child
                stack.append(child)
            else:
                group_of[child] = group
    return ScopeTree(root, group_of, by_id)


_CACHE: dict[int, tuple[Graph, ScopeTree]] = {}  # a few recent graphs (Graph has no weakref)
_CACHE_LOCK = threading.Lock()


def graph_scope_tree(graph: Graph, boxed: list[Node] | None = None) -> ScopeTree:
    """The scope tree of a (main) graph's boxes, cached per Graph object."""
    with _CACHE_LOCK:
        hit = _CACHE.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
    from onnxstudio.layout.labels import folded_constants, is_folded

    folded = folded_constants(graph)
    nodes = boxed if boxed is not None else [
        n for n in graph.nodes if not is_folded(n, folded)]
    pairs = [(n.id, scope_path(n.name, n.metadata)) for n in nodes]
    prefix = graph.id_prefix
    succ: dict[str, list[str]] = {}
    values = graph.values
    all_nodes = graph.nodes
    for node in nodes:
        for name in node.outputs:
            value = values.get(name)
            if value is not None and value.consumers:
                succ.setdefault(node.id, []).extend(all_nodes[c].id for c in value.consumers)
    tree = build_scope_tree(
        pairs,
        [f"in:{prefix}{v}" for v in graph.inputs],
        [f"out:{prefix}{v}" for v in graph.outputs],
        root_id=prefix.rstrip("/"),
        edges=succ,
    )
    with _CACHE_LOCK:
        while len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[id(graph)] = (graph, tree)
    return tree
