"""The last phases of many units at once: y by layer bands, end points and edge routes.

``layered.result`` does these per unit in Python (``coords.y_bands``, ``coords.routes``):
for expanded dag100k's 1,475 units that made 510k point tuples, each unit's packed into
its result afterwards. Here the units of one batch are numbered end to end (items, DAG
edges, input edges) and every step is one numpy operation over all of them, with the
same arithmetic on the same numbers, so each unit's result is exactly what
``layered.result`` gives it (a unit's numbers never depend on the rest of its batch).
Only each layer's band (a unit's running sum of heights) and the lookups of each edge's
chain of dummies stay per unit in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout import coords
from onnxstudio.layout.layered import DagResult
from onnxstudio.layout.ranking import Dag
from onnxstudio.layout.unit_place import DagInputs

_EMPTY: tuple[int, ...] = ()


def _concat(lists: Sequence[Sequence[float]] | Sequence[Sequence[int]], dtype: type
            ) -> np.ndarray:
    """The lists end to end as one array."""
    return fromiter_in_runs(chain.from_iterable(lists), dtype, sum(map(len, lists)))


def _group_spread(group: np.ndarray, key: np.ndarray, tie: np.ndarray, at: np.ndarray,
                  widths: np.ndarray) -> np.ndarray:
    """``coords._end_points`` for one side: the links of each box sorted by where they
    go next (then by the other end), spread along its side around its centre ``at``."""
    order = np.lexsort((tie, key, group))
    g = group[order]
    count = np.bincount(g, minlength=len(at)) if len(g) else np.zeros(len(at), np.int64)
    first = np.cumsum(count) - count
    k = count[g]
    i = np.arange(len(g)) - first[g]
    safe = np.maximum(k, 1)
    step = np.where(k > 1, np.minimum(10.0, widths[g] * 0.6 / safe), 0.0)
    out = np.empty(len(g))
    out[order] = at[g] + (i - (k - 1) / 2.0) * step
    return out


def batch_results(dags: Sequence[Dag], placed: Sequence[tuple[list[float], list[float], float]],
                  inputs: Sequence[DagInputs]) -> list[DagResult]:
    """``layered.result`` of each unit: ``placed`` holds each one's snapped centre x,
    half widths and width (``coords.snapped_x``)."""
    sizes = [g.size for g in dags]
    item_base = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    bands = [coords.y_bands(g, a.heights) for g, a in zip(dags, inputs, strict=True)]
    rank_base = np.concatenate(([0], np.cumsum([g.nranks for g in dags]))).astype(np.int64)
    ytop = _concat([b.ytop for b in bands], np.float64)
    band = _concat([b.band for b in bands], np.float64)
    x = _concat([p[0] for p in placed], np.float64)
    half = _concat([p[1] for p in placed], np.float64)
    width = _concat([g.width for g in dags], np.float64)
    unit_of = np.repeat(np.arange(len(dags)), sizes)
    rank = _concat([g.rank for g in dags], np.int64) + rank_base[unit_of]
    # real items: every unit's first n items; heights only for them
    ns = [g.n for g in dags]
    local = np.arange(len(x)) - item_base[:-1][unit_of]
    real = np.flatnonzero(local < np.asarray(ns, dtype=np.int64)[unit_of])
    height = np.zeros(len(x))
    height[real] = _concat([a.heights[:n] for a, n in zip(inputs, ns, strict=True)],
                           np.float64)
    xs = x - half  # left edges
    ys = np.zeros(len(x))
    ys[real] = ytop[rank[real]] + (band[rank[real]] - height[real]) / 2.0

    # the DAG's edges, unit after unit in each one's order, and their chains of dummies
    du_l: list[int] = []
    dv_l: list[int] = []
    chain_l: list[int] = []
    chain_len: list[int] = []
    dag_count: list[int] = []
    dummy_count: list[int] = []
    dag_index: list[dict[tuple[int, int], int]] = []
    for g in dags:
        keys = list(g.dag)
        dag_index.append(dict(zip(keys, range(len(du_l), len(du_l) + len(keys)),
                                  strict=True)))
        du_l.extend(map(itemgetter(0), keys))
        dv_l.extend(map(itemgetter(1), keys))
        chains = list(map(g.chains.get, keys, repeat(_EMPTY)))
        lens = list(map(len, chains))
        chain_len.extend(lens)
        chain_l.extend(chain.from_iterable(chains))
        dag_count.append(len(keys))
        dummy_count.append(sum(lens))
    starts = item_base[:-1]
    du = np.asarray(du_l, dtype=np.int64) + np.repeat(starts, dag_count)
    dv = np.asarray(dv_l, dtype=np.int64) + np.repeat(starts, dag_count)
    clen = np.asarray(chain_len, dtype=np.int64)
    dummies = np.asarray(chain_l, dtype=np.int64) + np.repeat(starts, dummy_count)
    cend = np.cumsum(clen)
    cstart = cend - clen
    has = clen > 0
    nxt = dv.copy()
    nxt[has] = dummies[cstart[has]]
    prv = du.copy()
    prv[has] = dummies[cend[has] - 1]
    start = _group_spread(du, x[nxt], dv, x, width)
    end = _group_spread(dv, x[prv], du, x, width)

    # each dummy is one point at its layer's top, and one more at its bottom when the
    # layer has a height; a DAG edge's middle points are its dummies' in order
    d_rank = rank[dummies]
    d_two = band[d_rank] > 0
    d_pts = 1 + d_two.astype(np.int64)
    mid_x = np.repeat(x[dummies], d_pts)
    mid_y = np.repeat(ytop[d_rank], d_pts)
    second = np.cumsum(d_pts)[d_two] - 1
    mid_y[second] = ytop[d_rank[d_two]] + band[d_rank[d_two]]
    mid_count = np.zeros(len(du), np.int64)
    if len(dummies):
        edge_of_d = np.repeat(np.arange(len(du)), clen)
        mid_count = np.bincount(edge_of_d, d_pts, minlength=len(du)).astype(np.int64)
    mid_end = np.cumsum(mid_count)
    mid_start = mid_end - mid_count

    # the input edges: each its DAG edge (turned round when reversed), offsets if given
    de_l: list[int | None] = []
    kind_l: list[int] = []  # 0 a loop (no route), 1 forward, 2 reversed
    sx_l: list[float | None] = []
    ex_l: list[float | None] = []
    rev_all: list[list[bool]] = []
    edge_counts: list[int] = []
    for a, index in zip(inputs, dag_index, strict=True):
        n_edges = len(a.edges)
        at = list(map(index.get, a.edges))  # None: a loop or a reversed edge
        kinds = [1] * n_edges
        flags = [False] * n_edges
        if None in at:
            for e, i in enumerate(at):
                if i is None:
                    u, v = a.edges[e]
                    if u == v:
                        at[e] = 0
                        kinds[e] = 0
                    else:
                        at[e] = index[(v, u)]
                        kinds[e] = 2
                        flags[e] = True
        de_l.extend(at)
        kind_l.extend(kinds)
        sx_l.extend(a.src_off if a.src_off is not None else repeat(None, n_edges))
        ex_l.extend(a.dst_off if a.dst_off is not None else repeat(None, n_edges))
        rev_all.append(flags)
        edge_counts.append(n_edges)
    de = np.asarray(de_l, dtype=np.int64)
    kind = np.asarray(kind_l, dtype=np.int64)
    # None (no fixed port) is NaN; a reversed edge's ports are not used
    sx = np.where(kind == 1, np.asarray(sx_l, dtype=np.float64), np.nan)
    ex = np.where(kind == 1, np.asarray(ex_l, dtype=np.float64), np.nan)
    a_box = du[de]
    b_box = dv[de]
    first_x = np.where(np.isnan(sx), start[de], xs[a_box] + np.nan_to_num(sx))
    first_y = ys[a_box] + height[a_box]
    last_x = np.where(np.isnan(ex), end[de], xs[b_box] + np.nan_to_num(ex))
    last_y = ys[b_box]
    count = np.where(kind > 0, 2 + mid_count[de], 0)
    route_end = np.cumsum(count)
    route_start = route_end - count
    total = int(route_end[-1]) if len(route_end) else 0
    pts = np.empty((total, 2))
    back_r = kind == 2
    drawn = kind > 0
    head = np.where(back_r, route_end - 1, route_start)[drawn]  # where the start goes
    tail = np.where(back_r, route_start, route_end - 1)[drawn]
    pts[head, 0] = first_x[drawn]
    pts[head, 1] = first_y[drawn]
    pts[tail, 0] = last_x[drawn]
    pts[tail, 1] = last_y[drawn]
    mids = mid_count[de]
    route_of = np.repeat(np.arange(len(de)), mids)
    j = np.arange(len(route_of)) - np.repeat(np.cumsum(mids) - mids, mids)
    src_row = mid_start[de][route_of] + j
    dst_row = np.where(back_r[route_of], route_end[route_of] - 2 - j,
                       route_start[route_of] + 1 + j)
    pts[dst_row, 0] = mid_x[src_row]
    pts[dst_row, 1] = mid_y[src_row]

    # back to units: list slices of one conversion each, views of the packed arrays
    edge_base = np.concatenate(([0], np.cumsum(edge_counts))).astype(np.int64)
    first_point = np.concatenate((route_start, [total]))[edge_base[:-1]]
    ends_rel = route_end - np.repeat(first_point, edge_counts)
    eb = edge_base.tolist()
    pt_base = np.concatenate((first_point, [total])).tolist()
    xs_l = xs.tolist()
    ys_l = ys.tolist()
    out = []
    for u, (g, p, b) in enumerate(zip(dags, placed, bands, strict=True)):
        lo = int(item_base[u])
        n = g.n
        out.append(DagResult.packed(xs_l[lo:lo + n], ys_l[lo:lo + n], p[2], b.height,
                                    pts[pt_base[u]:pt_base[u + 1]],
                                    ends_rel[eb[u]:eb[u + 1]], rev_all[u], g.rank[:n]))
    return out
