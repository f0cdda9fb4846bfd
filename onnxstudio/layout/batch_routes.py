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
from itertools import chain

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout import coords
from onnxstudio.layout.batch_order import has_offsets
from onnxstudio.layout.batch_rank import Ints, Ranked, ranges
from onnxstudio.layout.layered import DagResult
from onnxstudio.layout.unit_place import DagInputs


def _concat(lists: Sequence[Sequence[float]] | Sequence[Sequence[int]], dtype: type
            ) -> np.ndarray:
    """The lists end to end as one array."""
    return fromiter_in_runs(chain.from_iterable(lists), dtype, sum(map(len, lists)))


def _group_spread(group: np.ndarray, key: np.ndarray, tie: np.ndarray, at: np.ndarray,
                  widths: np.ndarray) -> np.ndarray:
    """``coords._end_points`` for one side: the links of each box sorted by where they
    go next (then by the other end), spread along its side around its centre ``at``."""
    count = np.bincount(group, minlength=len(at)) if len(group) else \
        np.zeros(len(at), np.int64)
    k = count[group]
    i = np.zeros(len(group), dtype=np.int64)  # each link's place on its box's side
    shared = np.flatnonzero(k > 1)  # only boxes with several links sort theirs
    order = shared[np.lexsort((tie[shared], key[shared], group[shared]))]
    gs = group[order]
    i[order] = np.arange(len(order)) - np.searchsorted(gs, gs)
    safe = np.maximum(k, 1)
    step = np.where(k > 1, np.minimum(10.0, widths[group] * 0.6 / safe), 0.0)
    out = at[group] + (i - (k - 1) / 2.0) * step
    return out


def _bands(r: Ranked, height: np.ndarray, real: Ints) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray, Ints]:
    """``coords.y_bands`` of every unit: each layer's band (its tallest real box) and
    top, each unit's height, and each layer's number in the batch. The tops are a running
    sum per unit, one row each (numpy accumulates a row in order, as the loop does)."""
    seg_base = np.concatenate(([0], np.cumsum(r.nranks)))
    nseg = int(seg_base[-1])
    band = np.zeros(nseg)
    seg = seg_base[r.unit] + r.rank
    np.maximum.at(band, seg[real], height[real])
    seg_unit = np.repeat(np.arange(len(r.nranks)), r.nranks)
    col = np.arange(nseg) - seg_base[:-1][seg_unit]
    rows = np.zeros((len(r.nranks), int(r.nranks.max(initial=0))))
    rows[seg_unit, col] = band + coords.RANK_SEP
    acc = np.cumsum(rows, axis=1)
    ytop = np.zeros(nseg)
    later = col > 0
    ytop[later] = acc[seg_unit[later], col[later] - 1]
    return band, ytop, acc[np.arange(len(r.nranks)), r.nranks - 1] - coords.RANK_SEP, seg


def _dag_index(r: Ranked, eu: Ints, ev: Ints) -> tuple[Ints, Ints]:
    """Each input edge's DAG edge and kind: 0 a loop (no route), 1 forward, 2 reversed."""
    key = r.du * r.size + r.dv
    perm = np.argsort(key)
    keys = key[perm]

    def find(k: Ints) -> tuple[Ints, np.ndarray]:
        at = np.minimum(np.searchsorted(keys, k), max(len(keys) - 1, 0))
        return perm[at] if len(perm) else at, keys[at] == k if len(keys) else k < 0

    fwd_at, fwd = find(eu * r.size + ev)
    rev_at, _ = find(ev * r.size + eu)
    kind = np.where(fwd, 1, np.where(eu == ev, 0, 2))
    return np.where(kind == 2, rev_at, np.where(kind == 1, fwd_at, 0)), kind


def batch_results(r: Ranked, placed: Sequence[tuple[list[float], list[float], float]],
                  inputs: Sequence[DagInputs]) -> list[DagResult]:
    """``layered.result`` of each unit: ``placed`` holds each one's snapped centre x,
    half widths and width (``coords.snapped``)."""
    size = r.size
    item_base = r.base
    x = _concat([p[0] for p in placed], np.float64)
    half = r.width / 2.0  # what ``placed`` holds: every unit's, in one array already
    width = r.width
    real = np.flatnonzero(~r.dummy)
    height = np.zeros(size)
    height[real] = _concat([a.heights for a in inputs], np.float64)
    band, ytop, heights, rank = _bands(r, height, real)
    xs = x - half  # left edges
    ys = np.zeros(size)
    ys[real] = ytop[rank[real]] + (band[rank[real]] - height[real]) / 2.0

    # the DAG's edges, unit after unit in each one's order, and their chains of dummies
    du, dv, clen = r.du, r.dv, r.chain_len
    dummies = ranges(r.chain_start, clen)[1]
    has = clen > 0
    nxt = dv.copy()
    nxt[has] = r.chain_start[has]
    prv = du.copy()
    prv[has] = r.chain_start[has] + clen[has] - 1
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
    edge_base = r.edge_base
    edge_counts = np.diff(edge_base)
    off = np.repeat(item_base[:-1], edge_counts)
    if r.edge_dag is None:
        de, kind = _dag_index(r, r.edges[:, 0] + off, r.edges[:, 1] + off)
    else:  # no edge turned round: each its DAG edge, or a loop
        kind = (r.edge_dag >= 0).astype(np.intp)
        de = np.maximum(r.edge_dag, 0)
    # None (no fixed port) is NaN; a reversed edge's ports are not used; only units
    # with fixed ports have any
    sx = np.full(len(de), np.nan)
    ex = np.full(len(de), np.nan)
    rows = [u for u, a in enumerate(inputs) if has_offsets(a)]
    if rows:
        at = ranges(edge_base[rows], edge_counts[rows])[1]
        sx[at] = np.array(list(chain.from_iterable(inputs[u].src_off for u in rows)),
                          dtype=np.float64)
        ex[at] = np.array(list(chain.from_iterable(inputs[u].dst_off for u in rows)),
                          dtype=np.float64)
    fwd = kind == 1
    sx = np.where(fwd, sx, np.nan)
    ex = np.where(fwd, ex, np.nan)
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
    mids = np.where(drawn, mid_count[de], 0)  # a loop has no route
    route_of = np.repeat(np.arange(len(de)), mids)
    j = np.arange(len(route_of)) - np.repeat(np.cumsum(mids) - mids, mids)
    src_row = mid_start[de][route_of] + j
    dst_row = np.where(back_r[route_of], route_end[route_of] - 2 - j,
                       route_start[route_of] + 1 + j)
    pts[dst_row, 0] = mid_x[src_row]
    pts[dst_row, 1] = mid_y[src_row]

    # back to units: list slices of one conversion each, views of the packed arrays
    first_point = np.concatenate((route_start, [total]))[edge_base[:-1]]
    ends_rel = route_end - np.repeat(first_point, edge_counts)
    eb = edge_base.tolist()
    pt_base = np.concatenate((first_point, [total])).tolist()
    xs_l = xs.tolist()
    ys_l = ys.tolist()
    rank_l = r.rank.tolist()
    rev_l = (kind == 2).tolist()
    heights_l = heights.tolist()
    out = []
    for u, (lo, n, p) in enumerate(zip(item_base.tolist(), r.n.tolist(), placed,
                                       strict=False)):
        out.append(DagResult.packed(xs_l[lo:lo + n], ys_l[lo:lo + n], p[2], heights_l[u],
                                    pts[pt_base[u]:pt_base[u + 1]],
                                    ends_rel[eb[u]:eb[u + 1]], rev_l[eb[u]:eb[u + 1]],
                                    rank_l[lo:lo + n]))
    return out
