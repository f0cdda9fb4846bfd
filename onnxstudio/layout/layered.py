"""Sugiyama-style layered layout of one flat graph of sized boxes (top to bottom).

The phases follow Gansner et al. (1993), one module each: ``ranking`` (break cycles,
layer, split long edges into shared trunks of dummies, capped), ``ordering`` (median
sweeps with transpositions, keeping the best ordering seen), ``coords`` (x by isotonic
sweeps that keep long chains straight, y by layer bands, and the edge routes).

Everything is plain Python lists: the graphs laid out here are one group at a time
(tens to hundreds of items), where numpy's per-call overhead would dominate; only the
crossing count, one expression over every pair of links of a unit, pays for it. Many
new units at once (a depth of expanded dag100k: 1,475) are ranked, ordered and placed
together as numpy steps by ``batch.py``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from onnxstudio.layout import coords
from onnxstudio.layout.ordering import LayoutCancelled, Ports, order_layers, port_slots
from onnxstudio.layout.ranking import Dag, acyclic, add_dummies, assign_ranks

__all__ = ["DagResult", "LayoutCancelled", "layout_dag"]

Point = tuple[float, float]


class DagResult:
    """Positions (top-left), per-edge routes in input edge order, and which were reversed.

    The routes are kept packed (every point in one float64 array, ``ends`` where each
    route stops): results stay in the memo for the whole session, and expanded dag100k's
    510k route points as lists of tuples took 65 MB there; ``routes`` unpacks them."""

    __slots__ = ("ends", "height", "points", "rank", "reversed", "width", "x", "y")

    def __init__(self, x: list[float], y: list[float], width: float, height: float,
                 routes: list[list[Point]], reversed: list[bool], rank: list[int]) -> None:
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.points = np.fromiter(chain.from_iterable(chain.from_iterable(routes)),
                                  dtype=float).reshape(-1, 2)
        self.ends = np.cumsum([len(r) for r in routes], dtype=np.intp)
        self.reversed = reversed
        self.rank = rank

    @classmethod
    def packed(cls, x: list[float], y: list[float], width: float, height: float,
               points: np.ndarray, ends: np.ndarray, reversed: list[bool], rank: list[int]
               ) -> DagResult:
        """A result whose routes come packed already (``batch_routes``, or a worker process)."""
        res = cls.__new__(cls)
        res.x, res.y, res.width, res.height = x, y, width, height
        res.points, res.ends, res.reversed, res.rank = points, ends, reversed, rank
        return res

    @property
    def routes(self) -> list[list[Point]]:
        pts = list(zip(*self.points.T.tolist(), strict=True)) if len(self.points) else []
        ends = self.ends.tolist()
        return [pts[a:b] for a, b in zip([0, *ends], ends, strict=False)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DagResult):
            return NotImplemented
        return (self.x, self.y, self.width, self.height, self.routes, self.reversed,
                self.rank) == (other.x, other.y, other.width, other.height, other.routes,
                               other.reversed, other.rank)

    __hash__ = None  # type: ignore[assignment]


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
    key = dag_key(widths, heights, edges, weights, top, bottom, src_off, dst_off)
    hit = remembered(key)
    if hit is not None:
        return hit
    res = _layout_dag(widths, heights, edges, weights=weights, top=top, bottom=bottom,
                      src_off=src_off, dst_off=dst_off, cancel=cancel)
    remember(key, res)
    return res


def dag_key(widths: Sequence[float], heights: Sequence[float],
            edges: Sequence[tuple[int, int]], weights: Sequence[float] | None,
            top: Sequence[int], bottom: Sequence[int],
            src_off: Sequence[float | None] | None,
            dst_off: Sequence[float | None] | None) -> tuple[Any, ...]:
    """The memo's key: every input of one layout."""
    return (tuple(widths), tuple(heights), tuple(edges),
            None if weights is None else tuple(weights), tuple(top), tuple(bottom),
            None if src_off is None else tuple(src_off),
            None if dst_off is None else tuple(dst_off))


def remembered(key: tuple[Any, ...]) -> DagResult | None:
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
        return hit


def remember(key: tuple[Any, ...], res: DagResult) -> None:
    with _CACHE_LOCK:
        _CACHE[key] = res
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)


def ranked(widths: Sequence[float], edges: Sequence[tuple[int, int]],
            weights: Sequence[float] | None, top: Sequence[int], bottom: Sequence[int],
            src_off: Sequence[float | None] | None, dst_off: Sequence[float | None] | None
            ) -> tuple[Dag, Ports]:
    """The first phases: a DAG in layers with long-edge dummies, and its fixed ports."""
    g = acyclic(len(widths), edges,
                list(weights) if weights is not None else [1.0] * len(edges))
    assign_ranks(g, top, bottom)
    add_dummies(g, widths)
    return g, port_slots(g, edges, widths, src_off, dst_off)


def result(g: Dag, x: list[float], half: list[float], width: float,
            heights: Sequence[float], edges: Sequence[tuple[int, int]],
            src_off: Sequence[float | None] | None,
            dst_off: Sequence[float | None] | None) -> DagResult:
    """The last phases: y by layer bands, positions and the edge routes."""
    n = g.n
    widths = g.width
    bands = coords.y_bands(g, heights)
    rank = g.rank
    ys = [bands.ytop[rank[v]] + (bands.band[rank[v]] - heights[v]) / 2.0 for v in range(n)]
    xs = [x[v] - half[v] for v in range(n)]
    routes, rev = coords.routes(g, x, xs, ys, bands, widths, heights, edges, src_off, dst_off)
    return DagResult(xs, ys, width, bands.height, routes, rev, rank[:n])


def empty(m: int) -> DagResult:
    return DagResult([], [], 0.0, 0.0, [[] for _ in range(m)], [False] * m, [])


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
    if not widths:
        return empty(len(edges))
    g, ports = ranked(widths, edges, weights, top, bottom, src_off, dst_off)
    layers = order_layers(g, ports, cancel)
    x, half, width = coords.x_coords(g, layers, edges, src_off, dst_off)
    return result(g, x, half, width, heights, edges, src_off, dst_off)
