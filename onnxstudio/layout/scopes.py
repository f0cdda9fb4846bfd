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
import threading
from itertools import chain, repeat
from typing import cast

import numpy as np

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
    return _tree(nodes, head, tail, root_id, limit, (src, dst),
                 lambda: (edges or {}, names or {}))


def _tree(nodes: list[tuple[str, tuple[str, ...]]], head: list[str], tail: list[str],
          root_id: str, limit: int, links: tuple[np.ndarray, np.ndarray],
          needs: Chunking, io_apart: bool = False) -> ScopeTree:
    """build_scope_tree with the edges as leaf indices (into head, nodes, tail; -1 for
    none); the dicts of names and edges are made only if a group has to be chunked.
    ``io_apart``: head and tail ids are distinct and none is a node's."""
    root, groups, parent, leaf_group = _grow(nodes, head, tail, root_id)
    flat = {id(g) for g in groups}
    flat.difference_update(id(groups[gi]) for gi in parent[1:])
    src, dst = links
    known = (src >= 0) & (dst >= 0)
    if known.any():
        untangle(groups, parent, np.asarray(leaf_group, dtype=np.int64), src[known],
                 dst[known], flat)
    _compress(root, flat)
    chunk(root, limit, needs)
    tree = _lookups(root, flat, None if io_apart else {box_id for box_id, _ in nodes})
    for box_id in (*head, *tail) if io_apart else ():
        tree.group_of[box_id].node_count -= 1
    if io_apart:
        for group, outer in _nested(root, tree):
            outer.node_count += group.node_count
    return tree


def _grow(nodes: list[tuple[str, tuple[str, ...]]], head: list[str], tail: list[str],
          root_id: str) -> tuple[ScopeGroup, list[ScopeGroup], list[int], list[int]]:
    """The groups of the scope paths, created in graph order: the root, the groups
    (parents first), each one's parent index, and each leaf's group (head, nodes, tail)."""
    root = ScopeGroup(id=root_id or "/", label="", kind="scope")
    groups, parent = [root], [-1]
    kids = [root.children]
    index: dict[tuple[str, ...], int] = {(): 0}
    root.children.extend(head)
    leaf_group = [0] * len(head)
    prefix = root_id.rstrip("/")
    for box_id, path in nodes:
        gi = index.get(path)
        if gi is None:
            depth = len(path)
            while depth and path[:depth] not in index:
                depth -= 1
            gi = index[path[:depth]]
            for k in range(depth, len(path)):
                sub = ScopeGroup(id=prefix + "/" + "/".join(path[:k + 1]), label=path[k],
                                 parent=groups[gi])
                kids[gi].append(sub)
                parent.append(gi)
                gi = index[path[:k + 1]] = len(groups)
                groups.append(sub)
                kids.append(sub.children)
        kids[gi].append(box_id)
        leaf_group.append(gi)
    root.children.extend(tail)
    leaf_group += [0] * len(tail)
    return root, groups, parent, leaf_group


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


def _scope_paths(nodes: list[Node]) -> list[tuple[str, tuple[str, ...]]]:
    """``(id, scope_path)`` per node; thousands of nodes share each ``/a/b/`` prefix, so
    the path of a prefix is computed once (names without one still go the full way)."""
    by_head: dict[str, tuple[str, ...]] = {}
    out = []
    for node in nodes:
        head, slash, _ = node.name.rpartition("/")
        path = by_head.get(head) if slash else None
        if path is None:
            path = scope_path(node.name, node.metadata)
            if slash and path:
                by_head[head] = path
        out.append((node.id, path))
    return out


_CACHE: dict[int, tuple[Graph, ScopeTree]] = {}  # a few recent graphs (Graph has no weakref)
_CACHE_LOCK = threading.Lock()
_LINKS: dict[int, tuple[Graph, tuple[np.ndarray, np.ndarray]]] = {}


def graph_links(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Producer -> consumer edges as graph positions, one per consumer of each value;
    cached per Graph object (the scope tree and each layout read them)."""
    with _CACHE_LOCK:
        hit = _LINKS.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
    links = _links(graph)
    with _CACHE_LOCK:
        while len(_LINKS) >= 4:
            _LINKS.pop(next(iter(_LINKS)))
        _LINKS[id(graph)] = (graph, links)
    return links


def _links(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """graph_links, computed.

    Read from the values, not the nodes' outputs: 4x fewer steps on a 100k-node graph.
    The same edges unless a value is written by two nodes (an invalid graph the reader
    still loads); then the nodes' outputs are walked, as they name every writer."""
    producers: list[int] = []
    consumers: list[list[int]] = []
    for value in graph.values.values():
        if value.producer is not None:
            producers.append(value.producer)
            consumers.append(value.consumers)
    if len(producers) != sum(1 for n in graph.nodes for name in n.outputs if name):
        values = graph.values
        producers, consumers = [], []
        for i, node in enumerate(graph.nodes):
            for name in node.outputs:
                written = values.get(name)
                if written is not None:
                    producers.append(i)
                    consumers.append(written.consumers)
    counts = np.fromiter(map(len, consumers), np.int64, len(consumers))
    src = np.repeat(np.asarray(producers, dtype=np.int64), counts)
    dst = np.fromiter(chain.from_iterable(consumers), np.int64, len(src))
    return src, dst




def graph_scope_tree(graph: Graph, boxed: list[Node] | None = None) -> ScopeTree:
    """The scope tree of a (main) graph's boxes, cached per Graph object."""
    with _CACHE_LOCK:
        hit = _CACHE.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
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
    src, dst = graph_links(graph)
    src, dst = leaf[src], leaf[dst]

    def needs() -> tuple[dict[str, list[str]], dict[str, str]]:
        ids = [n.id for n in nodes]
        succ: dict[str, list[str]] = {}
        for s, d in zip(src.tolist(), dst.tolist(), strict=True):
            if s >= 0 and d >= 0:
                succ.setdefault(ids[s - len(head)], []).append(ids[d - len(head)])
        return succ, {n.id: n.name or n.op_type for n in nodes}

    tree = _tree(_scope_paths(nodes), head, [f"out:{prefix}{v}" for v in graph.outputs],
                 prefix.rstrip("/"), CHUNK_MAX, (src, dst), functools.cache(needs),
                 io_apart=len(set(graph.inputs)) == len(graph.inputs)
                 and len(set(graph.outputs)) == len(graph.outputs))
    remember_scope_tree(graph, tree)
    return tree


def remember_scope_tree(graph: Graph, tree: ScopeTree) -> None:
    """Make ``tree`` what ``graph_scope_tree(graph)`` returns (the layout cache's copy)."""
    with _CACHE_LOCK:
        while len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[id(graph)] = (graph, tree)
