"""Lay out many independent units at once (the units of one depth of a compound layout).

Each unit is ranked on its own (``layered.ranked``: plain Python, cheap), then the
ordering (``batch_order``) and x placement (``batch_place``) of every unit run together
as numpy steps whose count depends on the number of layers, not of items; snapping,
y and routes are per unit again. Only for batches of at least ``BATCH_MIN`` units that
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
from itertools import chain

from onnxstudio.concurrency import unit_pool
from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout import coords, layered, unit_codec
from onnxstudio.layout.batch_order import flatten, order_batch
from onnxstudio.layout.batch_place import place_batch, unit_slices
from onnxstudio.layout.batch_routes import batch_results
from onnxstudio.layout.layered import (
    DagResult,
    LayoutCancelled,
    dag_key,
    empty,
    ranked,
    remember,
    remembered,
)
from onnxstudio.layout.ordering import PAIRS_MAX, TRANSPOSE_MAX, Ports, initial_layers
from onnxstudio.layout.ranking import Dag
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


def _fits(g: Dag) -> bool:
    """Whether the batched ordering takes this unit (as ``order_layers`` would transpose
    it and count its crossings on all pairs of links at once)."""
    if g.size > TRANSPOSE_MAX:
        return False
    per_layer = [0] * g.nranks
    rank = g.rank
    for v, links in enumerate(g.down):
        per_layer[rank[v]] += len(links)
    return sum(k * (k - 1) // 2 for k in per_layer) <= PAIRS_MAX


def batched(inputs: list[DagInputs], cancel: Callable[[], bool] | None) -> list[DagResult]:
    """One batch's results (in this process or a worker's: ``pool_worker``)."""
    out: list[DagResult | None] = [None] * len(inputs)
    batch: list[int] = []
    dags: list[Dag] = []
    ports: list[Ports] = []
    for i, a in enumerate(inputs):
        if not a.widths:
            out[i] = empty(len(a.edges))
            continue
        g, pt = ranked(a.widths, a.edges, a.weights, a.top, a.bottom, a.src_off, a.dst_off)
        if _fits(g):
            batch.append(i)
            dags.append(g)
            ports.append(pt)
        else:
            out[i] = _alone(a, cancel)
    # the batch steps through as many layers as its deepest unit has: one far deeper
    # than the rest (a long chain) is laid out alone
    deep = 2 * sorted(g.nranks for g in dags)[len(dags) // 2] + 8 if dags else 0
    for j in [j for j, g in enumerate(dags) if g.nranks > deep][::-1]:
        out[batch[j]] = _alone(inputs[batch[j]], cancel)
        del batch[j], dags[j], ports[j]
    if batch:
        for i, res in zip(batch, _engine(dags, ports, [inputs[i] for i in batch], cancel),
                          strict=True):
            out[i] = res
    return [res for res in out if res is not None]


def _engine(dags: list[Dag], ports: list[Ports], inputs: list[DagInputs],
            cancel: Callable[[], bool] | None) -> list[DagResult]:
    """Order and place every unit of the batch together, then finish each alone."""
    f = flatten(dags, [initial_layers(g) for g in dags], ports)
    pos = order_batch(f, cancel)
    offsets = [coords.port_offsets(g, a.edges, [w / 2.0 for w in g.width], a.src_off,
                                   a.dst_off) for g, a in zip(dags, inputs, strict=True)]
    size = f.size
    widths = fromiter_in_runs(chain.from_iterable(g.width for g in dags), float, size)
    dummy = fromiter_in_runs(chain.from_iterable(g.is_dummy for g in dags), bool, size)
    oport = fromiter_in_runs(chain.from_iterable(op for op, _ in offsets), float, size)
    iport = fromiter_in_runs(chain.from_iterable(ip for _, ip in offsets), float, size)
    x = unit_slices(f, place_batch(f, pos, widths, dummy, oport, iport))
    order = f.order(pos)
    local = (order - f.base[f.unit[order]]).tolist()
    seg_start = f.seg_start.tolist()
    seg_len = f.seg_len.tolist()
    placed = []
    seg = 0
    for g, xs, (op, ip) in zip(dags, x, offsets, strict=True):
        layers = [local[seg_start[s]:seg_start[s] + seg_len[s]]
                  for s in range(seg, seg + g.nranks)]
        seg += g.nranks
        placed.append(coords.snapped_x(g, layers, xs, op, ip))
    return batch_results(dags, placed, inputs)
