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
          needs: Chunking) -> ScopeTree:
    """build_scope_tree with the edges as leaf indices (into head, nodes, tail; -1 for
    none); the dicts of names and edges are made only if a group has to be chunked."""
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
    src, dst = links
    known = (src >= 0) & (dst >= 0)
    if known.any():
        untangle(groups, parent, np.asarray(leaf_group, dtype=np.int64), src[known],
                 dst[known])
    _compress(root)
    chunk(root, limit, needs)
    is_op = {box_id for box_id, _ in nodes}
    group_of: dict[str, ScopeGroup] = {}
    by_id: dict[str, ScopeGroup] = {root.id: root}
    walked: list[tuple[ScopeGroup, ScopeGroup]] = []  # (group, its parent), parents first
    stack = [root]
    while stack:
        group = stack.pop()
        boxes = [c for c in group.children if not isinstance(c, ScopeGroup)]
        group.node_count = sum(map(is_op.__contains__, boxes))
        group_of.update(dict.fromkeys(boxes, group))
        if len(boxes) < len(group.children):
            for child in group.children:
                if isinstance(child, ScopeGroup):
                    by_id[child.id] = child
                    stack.append(child)
                    walked.append((child, group))
    for group, outer in reversed(walked):  # operators inside, recursively
        outer.node_count += group.node_count
    return ScopeTree(root, group_of, by_id)


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


def _links(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Producer -> consumer edges as graph positions, one per consumer of each value.

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
    src, dst = _links(graph)
    src, dst = leaf[src], leaf[dst]

    def needs() -> tuple[dict[str, list[str]], dict[str, str]]:
        ids = [n.id for n in nodes]
        succ: dict[str, list[str]] = {}
        for s, d in zip(src.tolist(), dst.tolist(), strict=True):
            if s >= 0 and d >= 0:
                succ.setdefault(ids[s - len(head)], []).append(ids[d - len(head)])
        return succ, {n.id: n.name or n.op_type for n in nodes}

    tree = _tree(_scope_paths(nodes), head, [f"out:{prefix}{v}" for v in graph.outputs],
                 prefix.rstrip("/"), CHUNK_MAX, (src, dst), functools.cache(needs))
    remember_scope_tree(graph, tree)
    return tree


def remember_scope_tree(graph: Graph, tree: ScopeTree) -> None:
    """Make ``tree`` what ``graph_scope_tree(graph)`` returns (the layout cache's copy)."""
    with _CACHE_LOCK:
        while len(_CACHE) >= 4:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[id(graph)] = (graph, tree)
