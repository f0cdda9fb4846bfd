"""Sugiyama-style layered layout of one flat graph of sized boxes (top to bottom).

The phases follow Gansner et al. (1993), one module each: ``ranking`` (break cycles,
layer, split long edges into shared trunks of dummies, capped), ``ordering`` (median
sweeps with transpositions, keeping the best ordering seen), ``coords`` (x by isotonic
sweeps that keep long chains straight, y by layer bands, and the edge routes).

Everything is plain Python lists: the graphs laid out here are one group at a time
(tens to hundreds of items), where numpy's per-call overhead would dominate; only the
crossing count, one expression over every pair of links of a unit, pays for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from onnxstudio.layout import coords
from onnxstudio.layout.ordering import LayoutCancelled, order_layers, port_slots
from onnxstudio.layout.ranking import acyclic, add_dummies, assign_ranks

__all__ = ["DagResult", "LayoutCancelled", "layout_dag"]

Point = tuple[float, float]


@dataclass
class DagResult:
    """Positions (top-left), per-edge routes in input edge order, and which were reversed."""

    x: list[float]
    y: list[float]
    width: float
    height: float
    routes: list[list[Point]]
    reversed: list[bool]
    rank: list[int]


_CACHE: OrderedDict[tuple[Any, ...], DagResult] = OrderedDict()
_CACHE_LOCK = threading.Lock()  # the canvas and an export may lay out on two workers
CACHE_SIZE = 4096


def layout_dag(
    widths: Sequence[float],
    heights: Sequence[float],
    edges: Sequence[tuple[int, int]],
    *,
    weights: Sequence[float] | None = None,
    top: Sequence[int] = (),
    bottom: Sequence[int] = (),
    src_off: Sequence[float | None] | None = None,
    dst_off: Sequence[float | None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DagResult:
    """Memoised ``_layout_dag`` (see there). Identical inputs recur all the time: every
    layer of a transformer is the same small graph, and re-laying out after a group is
    toggled repeats every group the toggle did not touch. Results are shared: treat
    them as read-only."""
    key = (tuple(widths), tuple(heights), tuple(edges),
           None if weights is None else tuple(weights), tuple(top), tuple(bottom),
           None if src_off is None else tuple(src_off),
           None if dst_off is None else tuple(dst_off))
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    res = _layout_dag(widths, heights, edges, weights=weights, top=top, bottom=bottom,
                      src_off=src_off, dst_off=dst_off, cancel=cancel)
    with _CACHE_LOCK:
        _CACHE[key] = res
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return res


def _layout_dag(
    widths: Sequence[float],
    heights: Sequence[float],
    edges: Sequence[tuple[int, int]],
    *,
    weights: Sequence[float] | None = None,
    top: Sequence[int] = (),
    bottom: Sequence[int] = (),
    src_off: Sequence[float | None] | None = None,
    dst_off: Sequence[float | None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> DagResult:
    """Lay out boxes ``0..n-1`` joined by directed ``edges`` from top to bottom.

    ``top``/``bottom``: zero-size port items forced onto a first/last layer of their own
    (a group's entries and exits). ``src_off[e]``/``dst_off[e]``: fixed x offset from the
    left of the source/target box where edge e leaves/enters (an expanded group's exit or
    entry for that tensor), or None to spread edges along the box side.
    """
    n = len(widths)
    m = len(edges)
    if n == 0:
        return DagResult([], [], 0.0, 0.0, [[] for _ in edges], [False] * m, [])
    g = acyclic(n, edges, list(weights) if weights is not None else [1.0] * m)
    assign_ranks(g, top, bottom)
    add_dummies(g, widths)
    layers = order_layers(g, port_slots(g, edges, widths, src_off, dst_off), cancel)
    x, half, width = coords.x_coords(g, layers, edges, src_off, dst_off)
    bands = coords.y_bands(g, heights)
    rank = g.rank
    ys = [bands.ytop[rank[v]] + (bands.band[rank[v]] - heights[v]) / 2.0 for v in range(n)]
    xs = [x[v] - half[v] for v in range(n)]
    routes, rev = coords.routes(g, x, xs, ys, bands, widths, heights, edges, src_off, dst_off)
    return DagResult(xs, ys, width, bands.height, routes, rev, rank[:n])
