"""The scope tree: collapsible groups derived from node names or exporter metadata.

Exporters encode the module hierarchy in node names (``/encoder/layer.3/attention/MatMul``,
``encoder.layer.3.attention.MatMul``, ``a::b::c``); the dynamo exporter names nodes
flatly (``node_MatMul_297``) and records the scopes in ``pkg.torch.onnx.name_scopes`` or
``namespace`` metadata instead. Groups with a single child are merged away, and groups
with too many direct children are split into ordered chunks so that every group stays
small enough to lay out at once (see :mod:`onnxstudio.layout.scope_shape`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from itertools import chain, repeat
from operator import attrgetter
from typing import NamedTuple, cast

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout.per_graph import PerGraph
from onnxstudio.layout.scope_shape import Chunking, chunk, untangle
from onnxstudio.layout.scope_tree import GroupKind, ScopeGroup, ScopeTree
from onnxstudio.model.graph import Graph, Node

__all__ = ["CHUNK_MAX", "GroupKind", "ScopeGroup", "ScopeTree", "build_scope_tree",
           "graph_scope_tree", "scope_path"]


CHUNK_MAX = 1_500
"""A group with more direct children than this is split into ordered chunks: only a
scope too large to draw at once (a flat 30k-node graph), never an ordinary model."""

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


def _metadata_scopes(metadata: Mapping[str, str]) -> tuple[str, ...]:
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


def scope_path(name: str, metadata: Mapping[str, str] | None = None) -> tuple[str, ...]:
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


def _compress(group: ScopeGroup, flat: set[int]) -> None:
    """Merge single-child chains and lift lone nodes, bottom-up. ``flat``: ids of groups
    known to hold no groups (nothing to do there, and no need to look)."""
    if id(group) in flat:
        return
    for i, child in enumerate(group.children):
        if not isinstance(child, ScopeGroup):
            continue
        _compress(child, flat)
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


def build_scope_tree(
    nodes: list[tuple[str, tuple[str, ...]]],
    head: list[str] = (),  # type: ignore[assignment]
    tail: list[str] = (),  # type: ignore[assignment]
    *,
    root_id: str = "",
    limit: int = CHUNK_MAX,
    edges: dict[str, list[str]] | None = None,
    names: dict[str, str] | None = None,
) -> ScopeTree:
    """Tree over ``(box id, scope path)`` pairs in graph order; head/tail boxes sit at root.

    ``edges``: box id -> consumer box ids (to untangle cycles and order chunks);
    ``names``: box id -> node name (to title chunks by what they span)."""
    src = dst = np.zeros(0, dtype=np.int64)
    if edges:
        leaf_ids = [*head, *(box_id for box_id, _ in nodes), *tail]
        # map(dict.get, keys, repeat(-1)): the string lookups stay in C
        at = dict(zip(leaf_ids, range(len(leaf_ids)), strict=True)).get
        src = np.repeat(np.fromiter(map(at, edges, repeat(-1)), np.int64, len(edges)),
                        np.fromiter(map(len, edges.values()), np.int64, len(edges)))
        dst = np.fromiter(map(at, chain.from_iterable(edges.values()), repeat(-1)),
                          np.int64, len(src))
    grown = _Groups(root_id, head)
    for box_id, path in nodes:
        gi = grown.at(path)
        grown.kids[gi].append(box_id)
        grown.leaf_group.append(gi)
    return _tree(grown, tail, limit, (src, dst), lambda: (edges or {}, names or {}),
                 {box_id for box_id, _ in nodes})


def _tree(grown: _Groups, tail: list[str], limit: int, links: tuple[np.ndarray, np.ndarray],
          needs: Chunking, is_op: set[str] | None) -> ScopeTree:
    """build_scope_tree from its grown groups, with the edges as leaf indices (into head,
    nodes, tail; -1 for none); the dicts of names and edges are made only if a group has
    to be chunked. ``is_op`` None: the head and tail ids are distinct and none is a
    node's (its boxes less those are a group's node count)."""
    root, groups, parent = grown.root, grown.groups, grown.parent
    root.children.extend(tail)
    leaf_group = np.asarray(grown.leaf_group + [0] * len(tail), dtype=np.int64)
    flat = {id(g) for g in groups}
    flat.difference_update(id(groups[gi]) for gi in parent[1:])
    src, dst = links
    known = (src >= 0) & (dst >= 0)
    if known.any():
        untangle(groups, parent, leaf_group, src[known], dst[known], flat)
    _compress(root, flat)
    chunk(root, limit, needs)
    tree = _lookups(root, flat, is_op)
    if is_op is None:
        for box_id in (*grown.head, *tail):
            tree.group_of[box_id].node_count -= 1
        for group, outer in _nested(root, tree):
            outer.node_count += group.node_count
    return tree


class _Groups:
    """The groups of the scope paths, created in graph order: the root, the groups
    (parents first), each one's parent index, and each leaf's group (head, nodes)."""

    def __init__(self, root_id: str, head: list[str]) -> None:
        self.root = ScopeGroup(id=root_id or "/", label="", kind="scope")
        self.root.children.extend(head)
        self.head = head
        self.groups = [self.root]
        self.parent = [-1]
        self.kids = [self.root.children]
        self.index: dict[tuple[str, ...], int] = {(): 0}
        self.leaf_group = [0] * len(head)
        self.prefix = root_id.rstrip("/")

    def at(self, path: tuple[str, ...]) -> int:
        """The group of ``path``, created (with the missing ones above it) if new."""
        gi = self.index.get(path)
        if gi is not None:
            return gi
        depth = len(path)
        while depth and path[:depth] not in self.index:
            depth -= 1
        gi = self.index[path[:depth]]
        for k in range(depth, len(path)):
            sub = ScopeGroup(id=self.prefix + "/" + "/".join(path[:k + 1]), label=path[k],
                             parent=self.groups[gi])
            self.kids[gi].append(sub)
            self.parent.append(gi)
            gi = self.index[path[:k + 1]] = len(self.groups)
            self.groups.append(sub)
            self.kids.append(sub.children)
        return gi

    def bundle(self, ids: list[str], label: str) -> None:
        """Put head boxes ``ids`` into a group of their own under the root."""
        gi = self.at((label,))
        moving = set(ids)
        self.root.children[:] = [c for c in self.root.children
                                 if isinstance(c, ScopeGroup) or c not in moving]
        self.kids[gi].extend(ids)
        for i, box_id in enumerate(self.head):
            if box_id in moving:
                self.leaf_group[i] = gi

    def add_nodes(self, nodes: list[Node]) -> None:
        """Each node into the group of its scope path; thousands of nodes share each
        ``/a/b/`` prefix, so a prefix's group is found once (names without one still
        go the full way)."""
        at, kids, leaf_group = self.at, self.kids, self.leaf_group
        by_head: dict[str, int] = {}
        for node in nodes:
            head, slash, _ = node.name.rpartition("/")
            gi = by_head.get(head) if slash else None
            if gi is None:
                path = scope_path(node.name, node.metadata)
                gi = at(path)
                if slash and path:
                    by_head[head] = gi
            kids[gi].append(node.id)
            leaf_group.append(gi)


def _lookups(root: ScopeGroup, flat: set[int], is_op: set[str] | None) -> ScopeTree:
    """The tree with its lookups, and each group's node count: its boxes in ``is_op``
    (None: every box; the caller takes the others off), recursively if ``is_op``."""
    group_of: dict[str, ScopeGroup] = {}
    by_id: dict[str, ScopeGroup] = {root.id: root}
    parts: dict[int, tuple[list[str], list[ScopeGroup]]] = {}
    stack = [root]
    while stack:
        group = stack.pop()
        kids = group.children
        if id(group) in flat and not (kids and isinstance(kids[0], ScopeGroup)):
            boxes, inner = cast(list[str], kids), []  # (one chunked holds chunks only)
        else:
            inner = [c for c in kids if isinstance(c, ScopeGroup)]
            boxes = [c for c in kids if not isinstance(c, ScopeGroup)] if inner else cast(
                list[str], kids)
        parts[id(group)] = (boxes, inner)
        group.node_count = len(boxes) if is_op is None else sum(
            map(is_op.__contains__, boxes))
        group_of.update(dict.fromkeys(boxes, group))
        for child in inner:
            by_id[child.id] = child
            stack.append(child)
    tree = ScopeTree(root, group_of, by_id, parts)
    if is_op is not None:
        for group, outer in _nested(root, tree):
            outer.node_count += group.node_count
    return tree


def _nested(root: ScopeGroup, tree: ScopeTree) -> list[tuple[ScopeGroup, ScopeGroup]]:
    """(group, its parent) pairs, innermost first: for sums over the tree."""
    pairs: list[tuple[ScopeGroup, ScopeGroup]] = []
    stack = [root]
    while stack:
        group = stack.pop()
        for child in tree.part(group)[1]:
            pairs.append((child, group))
            stack.append(child)
    pairs.reverse()
    return pairs


_TREES: PerGraph[ScopeTree] = PerGraph(release=ScopeTree.untie)


class Links(NamedTuple):
    """How a graph's nodes connect, by position in ``graph.nodes``."""

    src: np.ndarray  # producer, one per consumer of each value
    dst: np.ndarray  # that consumer
    free: np.ndarray  # readers of values no node writes (inputs, weights, captured)
    nested: list[int]  # nodes with bodies


_LINKS: PerGraph[Links] = PerGraph()


def graph_links(graph: Graph) -> Links:
    """The graph's Links, cached per Graph object (the scope tree and each layout read
    them)."""
    links = _LINKS.get(graph)
    if links is None:
        links = _links(graph)
        _LINKS.put(graph, links)
    return links


def _links(graph: Graph) -> Links:
    """graph_links, computed.

    Read from the values, not the nodes' outputs: 4x fewer steps on a 100k-node graph.
    The same edges unless a value is written by two nodes (an invalid graph the reader
    still loads); then the nodes' outputs are walked, as they name every writer."""
    producers: list[int] = []
    consumers: list[tuple[int, ...]] = []
    free: list[tuple[int, ...]] = []
    for value in graph.values.values():
        if value.producer is not None:
            producers.append(value.producer)
            consumers.append(value.consumers)
        elif value.consumers:
            free.append(value.consumers)
    nodes = graph.nodes
    outputs = int(fromiter_in_runs(map(len, map(attrgetter("outputs"), nodes)), np.int64,
                                   len(nodes)).sum())
    if len(producers) != outputs and len(
            producers) != sum(1 for n in nodes for name in n.outputs if name):
        values = graph.values
        producers, consumers = [], []
        for i, node in enumerate(nodes):
            for name in node.outputs:
                written = values.get(name)
                if written is not None:
                    producers.append(i)
                    consumers.append(written.consumers)
    counts = fromiter_in_runs(map(len, consumers), np.int64, len(consumers))
    src = np.repeat(np.asarray(producers, dtype=np.int64), counts)
    dst = fromiter_in_runs(chain.from_iterable(consumers), np.int64, len(src))
    nested = [i for i, n in enumerate(nodes) if n.subgraphs] if any(
        map(attrgetter("subgraphs"), nodes)) else []  # the scan in C when there are none
    return Links(src, dst, np.fromiter(chain.from_iterable(free), np.int64), nested)


CACHE_GROUP = "past key/values"
"""The group an LLM's cache inputs are bundled in: it opens collapsed (``state.py``), so the
first view shows the layers rather than a row of 48 inputs and a fan of wires."""
_CACHE_BUNDLE_MIN = 4


def cache_inputs(graph: Graph) -> list[str]:
    """An LLM's key/value cache inputs (4-D or unranked, named past/cache), when there are
    enough of them to crowd the first view; else none."""
    found = []
    for name in graph.inputs:
        value = graph.values.get(name)
        shape = value.type.shape if value is not None else None
        lowered = name.lower()
        if ("past" in lowered or "cache" in lowered) and (shape is None or len(shape) == 4):
            found.append(name)
    return found if len(found) >= _CACHE_BUNDLE_MIN else []


def graph_scope_tree(graph: Graph, boxed: list[Node] | None = None) -> ScopeTree:
    """The scope tree of a (main) graph's boxes, cached per Graph object."""
    hit = _TREES.get(graph)
    if hit is not None:
        return hit
    from onnxstudio.layout.labels import folded_constants, is_folded

    folded = folded_constants(graph)
    all_nodes = graph.nodes
    if boxed is not None:
        where = {id(n): i for i, n in enumerate(all_nodes)}
        nodes, at = boxed, [where[id(n)] for n in boxed]
    elif folded:
        at = [i for i, n in enumerate(all_nodes) if not is_folded(n, folded)]
        nodes = [all_nodes[i] for i in at]
    else:
        nodes, at = all_nodes, list(range(len(all_nodes)))
    prefix = graph.id_prefix
    head = [f"in:{prefix}{v}" for v in graph.inputs]
    leaf = np.full(len(all_nodes), -1, dtype=np.int64)  # graph position -> leaf index
    leaf[at] = np.arange(len(head), len(head) + len(nodes))
    src, dst = graph_links(graph)[:2]
    src, dst = leaf[src], leaf[dst]

    def needs() -> tuple[dict[str, list[str]], dict[str, str]]:
        ids = [n.id for n in nodes]
        succ: dict[str, list[str]] = {}
        for s, d in zip(src.tolist(), dst.tolist(), strict=True):
            if s >= 0 and d >= 0:
                succ.setdefault(ids[s - len(head)], []).append(ids[d - len(head)])
        return succ, {n.id: n.name or n.op_type for n in nodes}

    grown = _Groups(prefix.rstrip("/"), head)
    caches = cache_inputs(graph)
    if caches:
        grown.bundle([f"in:{prefix}{v}" for v in caches], CACHE_GROUP)
    grown.add_nodes(nodes)
    apart = (len(set(graph.inputs)) == len(graph.inputs)
             and len(set(graph.outputs)) == len(graph.outputs))
    tree = _tree(grown, [f"out:{prefix}{v}" for v in graph.outputs], CHUNK_MAX, (src, dst),
                 functools.cache(needs), None if apart else {n.id for n in nodes})
    remember_scope_tree(graph, tree)
    return tree


def remember_scope_tree(graph: Graph, tree: ScopeTree) -> None:
    """Make ``tree`` what ``graph_scope_tree(graph)`` returns (the layout cache's copy)."""
    _TREES.put(graph, tree)
