"""Lay out many independent units at once (the units of one depth of a compound layout).

The units are ranked together (``batch_rank``: ``layered.ranked``'s DAG of each, as
numpy steps over the batch), then the ordering (``batch_order``) and x placement
(``batch_place``) of every unit run together as numpy steps whose count depends on the
number of layers, not of items; the initial orders (one depth-first walk) and snapping
are Python over the batch's flat lists; y and routes are numpy again (``batch_routes``).
Only for batches of at least ``BATCH_MIN`` units that
the memo does not hold: smaller ones (every transformer, whose layers are laid out once
and remembered) go through ``layered.layout_dag`` one by one, unchanged. A unit too wide
for the batched crossing count (``ordering.PAIRS_MAX``) or for transpositions
(``ordering.TRANSPOSE_MAX``) is laid out alone too.

When a depth has several batches and the process' worker pool is running
(``concurrency/unit_pool.py``, started by the window when a big model opens), each batch
goes to a worker as packed bytes (``unit_codec``) and they are laid out in parallel; a
batch the pool cannot do (no pool, a worker that died) is laid out here, with the same
result: a batch's results depend on its units alone, wherever it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from onnxstudio.concurrency import unit_pool
from onnxstudio.layout import coords, layered, unit_codec
from onnxstudio.layout.batch_order import flatten, has_offsets, order_batch
from onnxstudio.layout.batch_place import place_batch, unit_slices
from onnxstudio.layout.batch_rank import Ranked, rank_batch
from onnxstudio.layout.batch_routes import batch_results
from onnxstudio.layout.layered import (
    DagResult,
    LayoutCancelled,
    dag_key,
    empty,
    remember,
    remembered,
)
from onnxstudio.layout.ordering import PAIRS_MAX, TRANSPOSE_MAX
from onnxstudio.layout.unit_place import DagInputs

BATCH_MIN = 64  # units to lay out at which one batch beats laying them out one by one
# units per batch: a batch holds every unit's working state at once (all of expanded
# dag100k's: 194 MB more peak than one by one, 33 MB); numpy steps cost per batch
BATCH_MAX = 256
POOL_MIN = 2  # batches of one depth worth sending to the worker pool: one gains nothing
# operators of a model whose Expand All has that many new units at a depth (dag30k's:
# 2 batches); BERT-96 (8.6k) never batches: the pool would only cost its start
POOL_NODES = 20_000

__all__ = ["layout_dags", "warm_pool"]


def warm_pool(nodes: int) -> None:
    """Start the worker pool, if a model of ``nodes`` operators would use it, before it
    is needed: the workers start and import on their own (~0.3 s), off this path."""
    if nodes >= POOL_NODES:
        unit_pool.warm()


def layout_dags(inputs: Sequence[DagInputs], cancel: Callable[[], bool] | None = None,
                each: Callable[[int, DagResult], None] | None = None) -> list[DagResult]:
    """``layout_dag`` of each input (memoised alike), batched when enough are new.
    ``each(i, result)`` is called for every input as soon as its result is known (the
    remembered ones first, then a batch at a time as the workers finish them), so the
    caller places those while the workers lay out the rest."""
    keys = [dag_key(*a) for a in inputs]
    out = [remembered(k) for k in keys]
    todo: dict[tuple[object, ...], list[int]] = {}
    for i, (k, hit) in enumerate(zip(keys, out, strict=True)):
        if hit is None:
            todo.setdefault(k, []).append(i)
        elif each is not None:
            each(i, hit)
    new = list(todo)

    def land(start: int, made: list[DagResult]) -> None:
        for k, res in zip(new[start:start + len(made)], made, strict=True):
            remember(k, res)
            for i in todo[k]:
                out[i] = res
                if each is not None:
                    each(i, res)

    if len(new) >= BATCH_MIN:
        first = todo.values()
        units = [inputs[at[0]] for at in first]
        for start, made in _batches(
                [units[i:i + BATCH_MAX] for i in range(0, len(units), BATCH_MAX)], cancel):
            land(start * BATCH_MAX, made)
    else:
        for j, k in enumerate(new):
            if cancel is not None and cancel():
                raise LayoutCancelled
            land(j, [_alone(inputs[todo[k][0]], cancel)])
    return out  # type: ignore[return-value]  # every one filled


def _batches(batches: list[list[DagInputs]], cancel: Callable[[], bool] | None
             ) -> Iterator[tuple[int, list[DagResult]]]:
    """(index, results) of each batch as it is laid out: in the worker pool when there
    are two or more and it runs, else (or for a batch it could not do) here."""
    pool = unit_pool.started() if len(batches) >= POOL_MIN else None
    if pool is None:
        yield from ((i, batched(b, cancel)) for i, b in enumerate(batches))
        return
    try:
        for i, reply in pool.run([unit_codec.pack_inputs(b) for b in batches], cancel):
            yield i, batched(batches[i], cancel) if reply is None else \
                unit_codec.unpack_results(reply)
    except unit_pool.Cancelled:
        raise LayoutCancelled from None


def _alone(a: DagInputs, cancel: Callable[[], bool] | None) -> DagResult:
    return layered._layout_dag(a.widths, a.heights, a.edges, weights=a.weights, top=a.top,
                       bottom=a.bottom, src_off=a.src_off, dst_off=a.dst_off, cancel=cancel)


def _fitting(r: Ranked) -> np.ndarray:
    """Which units the batched ordering takes: not so wide that ``order_layers`` would
    skip transpositions or count crossings layer by layer, and (the batch steps through
    as many layers as its deepest unit has) not far deeper than the rest (a long chain)."""
    sizes = np.diff(r.base)
    depth = int(r.nranks.max(initial=1))
    per_layer = np.bincount((r.unit * depth + r.rank)[r.src], minlength=len(sizes) * depth)
    pairs = (per_layer * (per_layer - 1) // 2).reshape(len(sizes), depth).sum(axis=1)
    fit = (sizes <= TRANSPOSE_MAX) & (pairs <= PAIRS_MAX)
    if fit.any():
        deep = 2 * int(np.sort(r.nranks[fit])[fit.sum() // 2]) + 8
        fit &= r.nranks <= deep
    return fit


def batched(inputs: list[DagInputs], cancel: Callable[[], bool] | None) -> list[DagResult]:
    """One batch's results (in this process or a worker's: ``pool_worker``)."""
    out: list[DagResult | None] = [None] * len(inputs)
    batch: list[int] = []
    for i, a in enumerate(inputs):
        if a.widths:
            batch.append(i)
        else:
            out[i] = empty(len(a.edges))
    if batch:
        r = rank_batch([inputs[i] for i in batch])
        fit = _fitting(r).tolist()
        if not all(fit):  # those laid out alone; the rest ranked again without them
            for i in [i for i, ok in zip(batch, fit, strict=True) if not ok]:
                out[i] = _alone(inputs[i], cancel)
            batch = [i for i, ok in zip(batch, fit, strict=True) if ok]
            r = rank_batch([inputs[i] for i in batch]) if batch else r
    if batch:
        for i, res in zip(batch, _engine(r, [inputs[i] for i in batch], cancel),
                          strict=True):
            out[i] = res
    return [res for res in out if res is not None]


def _engine(r: Ranked, inputs: list[DagInputs], cancel: Callable[[], bool] | None
            ) -> list[DagResult]:
    """Order and place every unit of the batch together, then finish each alone."""
    f = flatten(r, inputs)
    pos = order_batch(f, cancel)
    half = r.width / 2.0
    half_l = half.tolist()
    oport = np.zeros(f.size)
    iport = np.zeros(f.size)
    bounds = r.base.tolist()
    for u, a in enumerate(inputs):
        if has_offsets(a):
            lo, hi = bounds[u], bounds[u + 1]
            oport[lo:hi], iport[lo:hi] = coords.port_offsets(
                hi - lo, a.edges, half_l[lo:hi], a.src_off, a.dst_off)
    x = unit_slices(f, place_batch(f, pos, r.width, r.dummy, oport, iport))
    order = f.order(pos)
    local = (order - f.base[f.unit[order]]).tolist()
    seg_start = f.seg_start.tolist()
    seg_len = f.seg_len.tolist()
    # each item's one neighbour above (-1: none or several), as ``coords._snap`` reads it
    up_count = np.bincount(r.dst, minlength=f.size)
    one = up_count[r.dst] == 1
    up1 = np.full(f.size, -1, dtype=np.intp)
    up1[r.dst[one]] = r.src[one] - f.base[f.unit[r.src[one]]]
    up1_l = up1.tolist()
    dummy_l = r.dummy.tolist()
    oport_l = oport.tolist()
    iport_l = iport.tolist()
    placed = []
    seg = 0
    for u, (xs, nr) in enumerate(zip(x, r.nranks.tolist(), strict=True)):
        lo, hi = bounds[u], bounds[u + 1]
        layers = [local[seg_start[s]:seg_start[s] + seg_len[s]] for s in range(seg, seg + nr)]
        seg += nr
        placed.append(coords.snapped(layers, xs, half_l[lo:hi], dummy_l[lo:hi],
                                     up1_l[lo:hi], oport_l[lo:hi], iport_l[lo:hi]))
    return batch_results(r, placed, inputs)
