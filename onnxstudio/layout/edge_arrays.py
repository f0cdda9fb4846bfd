"""The edges of one whole graph drawn box for box, found on arrays (edge_collect.py's
common case: Expand All of a graph without bodies, or a graph small enough to open
expanded, like BERT-96).

Every node is then its own box, so an edge is a (producer, reader, tensor) of the graph
itself: each reader's inputs are listed once in graph order, coded as integers (a node
by its place, a graph input or output after the nodes, a tensor by its Value), and
deduplicated, filtered and ordered in a few numpy steps over the whole graph, instead
of dict look-ups and stores per edge (147k of them in expanded dag100k, whose edges took
0.2 s this way). The same edges, in the same order, with the same labels as the walk.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs, list_in_runs
from onnxstudio.layout import labels
from onnxstudio.model.graph import TensorType, Value

if TYPE_CHECKING:
    from onnxstudio.layout.build import _Body

_BITS = 21  # each of the three codes of an edge's key: up to 2M boxes and tensors


class EdgeLists(NamedTuple):
    """The drawn edges as parallel lists, in drawing order; when found on arrays, also
    each end's code (``codes``: index into ``boxes``), which split_edges reads."""

    sources: list[str]
    targets: list[str]
    values: list[str]
    labels: list[str]
    codes: tuple[np.ndarray, np.ndarray, list[str]] | None = None


def whole_graph_edges(body: _Body, vis: dict[str, str]) -> EdgeLists | None:
    """The edges of ``body`` (the main graph, every box shown: ``vis`` holds each shown
    box as itself); None when the graph is too big to code."""
    graph = body.graph
    nodes = graph.nodes
    values = graph.values
    folded = body.folded
    gp = graph.id_prefix
    n = len(nodes)
    inputs = {name: n + k for k, name in enumerate(graph.inputs)}
    # One pass over the nodes, reading each node, its inputs and their values once
    # (each object touched again later costs a cache miss: 20-30 ms a pass over 100k).
    boxes: list[str] = []
    names: list[str] = []
    found: list[Value] = []
    src: list[int] = []
    dst: list[int] = []
    add_box, add_name, add_value = boxes.append, names.append, found.append
    add_src, add_dst = src.append, dst.append
    folds = labels.FOLDED_OPS
    for i, node in enumerate(nodes):
        add_box(node.id)
        if node.op_type in folds and labels.is_folded(node, folded):
            continue
        for name in node.inputs:
            value = values.get(name) if name and name not in folded else None
            if value is None:
                continue
            k = value.producer
            if k is None:
                k = inputs.get(name)  # a weight or a captured value: no box
                if k is None:
                    continue
            add_src(k)
            add_dst(i)
            add_name(name)
            add_value(value)
    boxes += [f"in:{gp}{name}" for name in graph.inputs]
    out_at = len(boxes)
    boxes += [f"out:{gp}{name}" for name in graph.outputs]
    for k, name in enumerate(graph.outputs):  # then each graph output from its writer
        value = values.get(name)
        w = None if value is None else (
            value.producer if value.producer is not None else inputs.get(name))
        if w is not None:
            add_src(w)
            add_dst(out_at + k)
            add_name(name)
            add_value(value)  # type: ignore[arg-type]
    if len(boxes) >= 1 << _BITS or len(found) >= 1 << _BITS:
        return None
    shown = fromiter_in_runs(map(vis.__contains__, boxes), bool, len(boxes))
    tensor = np.unique(fromiter_in_runs(map(id, found), np.int64, len(found)),
                       return_inverse=True)[1].reshape(-1)
    s_all = np.asarray(src, dtype=np.int64)
    d_all = np.asarray(dst, dtype=np.int64)
    ok = np.flatnonzero(shown[s_all] & shown[d_all] & (s_all != d_all))
    key = (s_all[ok] << 2 * _BITS) | (d_all[ok] << _BITS) | tensor[ok]
    rows = np.sort(ok[np.unique(key, return_index=True)[1]])
    s, d = s_all[rows], d_all[rows]
    at = rows.tolist()
    shapes = list_in_runs(map(attrgetter("type.shape"), map(found.__getitem__, at)))
    text = {shape: labels.shape_text(TensorType(shape=shape)) for shape in set(shapes)}
    text[None] = ""
    get = boxes.__getitem__
    return EdgeLists(list_in_runs(map(get, s.tolist())), list_in_runs(map(get, d.tolist())),
                     list_in_runs(map(names.__getitem__, at)),
                     list_in_runs(map(text.__getitem__, shapes)), (s, d, boxes))
