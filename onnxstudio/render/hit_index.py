"""Spatial queries on a Layout with numpy: what is under a point, what is in a rectangle.

Built once per layout. Vectorised masks over flat coordinate arrays answer a query on
100k boxes in about a millisecond, which is all the canvas needs for painting only the
exposed area, hovering and clicking; a grid or R-tree would only pay off far beyond
that. Qt-free so tests and exporters can use it headless.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout.build import FRAME_LABEL_PAD
from onnxstudio.layout.types import Box, Edge, Layout, Point

Rect = tuple[float, float, float, float]  # x, y, width, height

_ID = attrgetter("id")
_RECT = attrgetter("x", "y", "width", "height")
_PACKED = attrgetter("packed")

# Band at the top of an expanded group frame holding its label (inside the room the
# layout leaves above a group's content).
GROUP_LABEL_HEIGHT = FRAME_LABEL_PAD - 4.0


@dataclass(frozen=True)
class Neighbourhood:
    """A box's incoming and outgoing edges (indices into Layout.edges) and their ends."""

    incoming: tuple[int, ...]
    outgoing: tuple[int, ...]
    boxes: frozenset[str]  # the other ends, without the box itself


def _floats(rows: Iterable[Sequence[float]], count: int) -> np.ndarray:
    """The numbers of ``rows`` in one flat array. ``np.array`` of a list of tuples holds
    the GIL for its whole conversion (60 ms per 100k rows: the window froze while a
    worker built the index); drawn from a generator, other threads run in between."""
    return np.fromiter(itertools.chain.from_iterable(rows), dtype=np.float64, count=count)


def _packed(points: Iterable[Sequence[float]]) -> bytes:
    return np.fromiter(itertools.chain.from_iterable(points), dtype=np.float64).tobytes()


class GraphIndex:
    """Answers geometric queries on one Layout; rebuild when the layout changes."""

    def __init__(self, layout: Layout, edge_margin: float = 0.0, picking: bool = True) -> None:
        """``picking``: also index the edge segments hovering, clicking and far zooms
        ask, built here on the worker rather than on the GUI thread's first hover; an
        export, which only paints, goes without (half the index' time). Each box's
        edges are indexed by ``adjacency`` (the finisher task's, after the first paint:
        0.1 s of expanded dag100k's layout task before)."""
        self.layout = layout
        boxes = layout.boxes
        self.ids: list[str] = list(map(_ID, boxes))
        # a dict comprehension, not dict(zip(...)): one C call held the GIL ~25 ms
        self.position: dict[str, int] = {bid: i for i, bid in enumerate(self.ids)}
        coords = fromiter_in_runs(chain.from_iterable(map(_RECT, boxes)), np.float64,
                                  4 * len(boxes))
        coords = coords.reshape(-1, 4)
        self.box_rects = coords  # rows of x, y, width, height: QRectFs, for batched paints
        self.bx0 = coords[:, 0]
        self.by0 = coords[:, 1]
        self.bx1 = coords[:, 0] + coords[:, 2]
        self.by1 = coords[:, 1] + coords[:, 3]
        # the boxes by their top, for box_indices_in to look at a band of them only (a
        # mask over expanded dag100k's 100k boxes was 0.6 ms a query, a paint or a tile
        # of edge labels); the tallest box says how far above the band a box may start
        self._by_top = np.argsort(self.by0, kind="stable")
        self._tops = self.by0[self._by_top]
        self._tallest = float(coords[:, 3].max()) + 1.0 if len(boxes) else 0.0

        groups = layout.groups
        g = _floats(((f.x, f.y, f.width, f.height, f.depth) for f in groups), 5 * len(groups))
        g = g.reshape(-1, 5)
        self.group_rects = np.ascontiguousarray(g[:, :4])  # as box_rects
        self.gx0, self.gy0 = g[:, 0], g[:, 1]
        self.gx1, self.gy1 = g[:, 0] + g[:, 2], g[:, 1] + g[:, 3]
        self.gdepth = g[:, 4]
        self.group_position: dict[str, int] = {f.id: i for i, f in enumerate(groups)}

        self._edge_margin = edge_margin
        self._edge_bounds: tuple[np.ndarray, ...] | None = None
        self._segments: np.ndarray | None = None
        # edges by source and by target box (CSR-style): out order, in order, their keys
        self._adjacency: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        if picking:
            self._build_edges(segments=True)

    def relabelled(self, layout: Layout) -> GraphIndex:
        """This index for ``layout``, a copy of its own with other edge labels only (see
        layout/relabel.py): the same geometry, so the arrays are shared, not rebuilt."""
        index = copy.copy(self)
        index.layout = layout
        return index

    # -- construction -------------------------------------------------------------------

    def _build_edges(self, segments: bool) -> tuple[np.ndarray, ...]:
        """Each route's bounding box (x0, x1, y0, y1) and, with ``segments``, the index
        of route segments. Without, only when a query first asks (an export of the
        whole drawing never does: 10 ms of BERT-96)."""
        margin = self._edge_margin
        edges = self.layout.edges
        # packed routes (layout/types.Edge) joined and read as one array, without a
        # Python number per point
        routes = list(map(_PACKED, edges))  # one property read per edge
        counts = fromiter_in_runs(map(len, routes), np.int64, len(routes)) >> 4
        missing = np.flatnonzero(counts == 0)  # edges without a route of their own
        for k in missing.tolist():
            routes[k] = _packed(self._fallback_points(edges[k].source, edges[k].target))
            counts[k] = len(routes[k]) >> 4
        self._point_counts = counts.copy()  # per edge its route's points (0: no route)
        self._point_counts[missing] = 0
        self._two_points = self._point_counts == 2  # one segment, to label in numpy
        flat = np.frombuffer(b"".join(routes), dtype=np.float64).reshape(-1, 2)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        if len(routes):
            xs, ys = flat[:, 0], flat[:, 1]
            self._edge_bounds = (np.minimum.reduceat(xs, starts) - margin,
                                 np.maximum.reduceat(xs, starts) + margin,
                                 np.minimum.reduceat(ys, starts) - margin,
                                 np.maximum.reduceat(ys, starts) + margin)
        else:
            self._edge_bounds = (np.empty(0),) * 4
        if not segments:
            return self._edge_bounds
        # Segments join consecutive points of the same route.
        owner = np.repeat(np.arange(len(routes), dtype=np.int64), counts)
        same = owner[:-1] == owner[1:] if len(owner) > 1 else np.zeros(0, dtype=bool)
        # rows of x0, y0, x1, y1: QLineFs, for batched paints
        segs = self._segments = np.hstack((flat[:-1][same], flat[1:][same]))
        self.sx0, self.sy0, self.sx1, self.sy1 = segs.T
        # each segment's extent, contiguous, for segments_in's masks (160k segments: 2-5 ms
        # a query before, 0.4-1.6 now, nothing when all of them are in view)
        self._seg_extent = (np.minimum(self.sx0, self.sx1), np.maximum(self.sx0, self.sx1),
                            np.minimum(self.sy0, self.sy1), np.maximum(self.sy0, self.sy1))
        xlo, xhi, ylo, yhi = self._seg_extent
        self._segs_box = ((float(xlo.min()), float(xhi.max()), float(ylo.min()),
                           float(yhi.max())) if len(segs) else (0.0, 0.0, 0.0, 0.0))
        self.seg_edge = owner[:-1][same] if len(owner) > 1 else np.zeros(0, dtype=np.int64)
        self._first_segment = starts - np.arange(len(routes))  # each route has a point
        return self._edge_bounds

    def route_points(self) -> np.ndarray:
        """Per edge the points of its route (0: it has none of its own)."""
        if self._edge_bounds is None:
            self._build_edges(segments=False)
        return self._point_counts

    def straight_ends(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per edge of ``edges``: its two ends (ax, ay, bx, by) when its route is one
        straight segment of some length, and whether it is (read from the segments'
        array: a Python step per edge was a tenth of placing expanded dag100k's labels)."""
        if self._segments is None:
            self._build_edges(segments=True)
        assert self._segments is not None
        two = self._two_points[edges]
        ends = np.zeros((len(edges), 4))
        ends[two] = self._segments[self._first_segment[edges[two]]]
        two &= (np.abs(ends[:, 2] - ends[:, 0]) > 1e-6) | (np.abs(ends[:, 3] - ends[:, 1]) > 1e-6)
        return ends, two

    def _fallback_points(self, source: str, target: str) -> list[tuple[float, float]]:
        """Centre to centre when the layout gave no route (keeps queries total)."""
        pts = []
        for bid in (source, target):
            i = self.position.get(bid)
            if i is not None:
                pts.append(((self.bx0[i] + self.bx1[i]) / 2, (self.by0[i] + self.by1[i]) / 2))
        return pts or [(0.0, 0.0)]

    def adjacency(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Edges by source and by target box, as sorted index arrays (CSR-style): out
        order, in order and their keys (made once, by the first to ask)."""
        table = self._adjacency
        if table is None:
            pos = self.position
            n = len(self.ids)
            edges = self.layout.edges
            src = np.fromiter((pos.get(e.source, n) for e in edges), dtype=np.int64)
            dst = np.fromiter((pos.get(e.target, n) for e in edges), dtype=np.int64)
            out_order = np.argsort(src, kind="stable")
            in_order = np.argsort(dst, kind="stable")
            table = self._adjacency = (out_order, in_order, src[out_order], dst[in_order])
        return table

    def _edges_of(self, box_id: str, order: np.ndarray, key: np.ndarray) -> tuple[int, ...]:
        i = self.position.get(box_id)
        if i is None:
            return ()
        lo, hi = np.searchsorted(key, [i, i + 1])
        return tuple(int(k) for k in order[lo:hi])

    # -- boxes --------------------------------------------------------------------------

    def box(self, box_id: str) -> Box | None:
        i = self.position.get(box_id)
        return None if i is None else self.layout.boxes[i]

    def centre_line(self, e: Edge) -> list[Point]:
        """A route for an edge without one: from its source box's centre to its target's."""
        a, b = self.box(e.source), self.box(e.target)
        return [p.center for p in (a, b) if p is not None] or [(0.0, 0.0)]

    def centre(self, item_id: str) -> tuple[float, float] | None:
        """The centre of box ``item_id`` or, failing that, of the group frame so named."""
        box = self.box(item_id)
        if box is not None:
            return box.center
        i = self.group_position.get(item_id)
        if i is None:
            return None
        g = self.layout.groups[i]
        return (g.x + g.width / 2, g.y + g.height / 2)

    def box_at(self, x: float, y: float) -> str | None:
        """Id of the box containing (x, y), or None."""
        hit = np.flatnonzero((self.bx0 <= x) & (x <= self.bx1) & (self.by0 <= y) & (y <= self.by1))
        return self.ids[int(hit[-1])] if hit.size else None

    def box_indices_in(self, rect: Rect | None) -> np.ndarray:
        """Indices (into Layout.boxes) of boxes intersecting ``rect`` (all when None)."""
        if rect is None:
            return np.arange(len(self.ids))
        x, y, w, h = rect
        band = self._by_top[np.searchsorted(self._tops, y - self._tallest, "left"):
                            np.searchsorted(self._tops, y + h, "right")]
        mask = ((self.bx1[band] >= x) & (self.bx0[band] <= x + w) & (self.by1[band] >= y)
                & (self.by0[band] <= y + h))
        return np.sort(band[mask])

    def boxes_in(self, rect: Rect | None) -> list[str]:
        return [self.ids[i] for i in self.box_indices_in(rect)]

    # -- groups -------------------------------------------------------------------------

    def group_indices_in(self, rect: Rect | None) -> np.ndarray:
        """Group frames intersecting ``rect``, outermost first (the order to paint them)."""
        if rect is None:
            idx = np.arange(len(self.layout.groups))
        else:
            x, y, w, h = rect
            mask = (self.gx1 >= x) & (self.gx0 <= x + w) & (self.gy1 >= y) & (self.gy0 <= y + h)
            idx = np.flatnonzero(mask)
        return idx[np.argsort(self.gdepth[idx], kind="stable")]

    def group_at(self, x: float, y: float) -> str | None:
        """The innermost expanded group frame containing (x, y)."""
        mask = (self.gx0 <= x) & (x <= self.gx1) & (self.gy0 <= y) & (y <= self.gy1)
        hit = np.flatnonzero(mask)
        if not hit.size:
            return None
        return self.layout.groups[int(hit[np.argmax(self.gdepth[hit])])].id

    def group_label_at(self, x: float, y: float) -> str | None:
        """The expanded group whose label band (top strip of its frame) holds (x, y)."""
        mask = (
            (self.gx0 <= x)
            & (x <= self.gx1)
            & (self.gy0 <= y)
            & (y <= self.gy0 + GROUP_LABEL_HEIGHT)
        )
        hit = np.flatnonzero(mask)
        if not hit.size:
            return None
        return self.layout.groups[int(hit[np.argmax(self.gdepth[hit])])].id

    # -- edges --------------------------------------------------------------------------

    def edge_indices_in(self, rect: Rect | None, margin: float = 0.0) -> np.ndarray:
        """Edges whose route's bounding box (grown by ``margin``) meets ``rect``."""
        if rect is None:
            return np.arange(len(self.layout.edges))
        x, y, w, h = rect
        ex0, ex1, ey0, ey1 = self._edge_bounds or self._build_edges(segments=False)
        mask = (ex1 >= x - margin) & (ex0 <= x + w + margin) & (ey1 >= y - margin) & (
            ey0 <= y + h + margin)
        return np.flatnonzero(mask)

    def segments_in(self, rect: Rect | None, margin: float = 0.0) -> np.ndarray:
        """The route segments meeting ``rect`` grown by ``margin``: a C-ordered array of
        rows x0, y0, x1, y1 (a far zoom draws edges straight, with one call)."""
        if self._segments is None:
            self._build_edges(segments=True)
        segs = self._segments
        assert segs is not None
        if rect is None or not len(segs):
            return segs
        x, y, w, h = rect
        x0, x1, y0, y1 = x - margin, x + w + margin, y - margin, y + h + margin
        left, right, top, bottom = self._segs_box
        if x0 <= left and right <= x1 and y0 <= top and bottom <= y1:
            return segs  # every segment is in view: no mask, no copy
        xlo, xhi, ylo, yhi = self._seg_extent
        return segs[(xhi >= x0) & (xlo <= x1) & (yhi >= y0) & (ylo <= y1)]

    def edge_near(self, x: float, y: float, tol: float = 4.0) -> int | None:
        """Index of the edge whose route passes within ``tol`` of (x, y), nearest first."""
        if not self.seg_edge.size:
            return None
        dx = self.sx1 - self.sx0
        dy = self.sy1 - self.sy0
        len2 = dx * dx + dy * dy
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(len2 > 0, ((x - self.sx0) * dx + (y - self.sy0) * dy) / len2, 0.0)
        t = np.clip(t, 0.0, 1.0)
        px = self.sx0 + t * dx - x
        py = self.sy0 + t * dy - y
        d2 = px * px + py * py
        best = int(np.argmin(d2))
        if d2[best] > tol * tol:
            return None
        return int(self.seg_edge[best])

    def neighbours(self, box_id: str) -> Neighbourhood:
        """Edges into and out of ``box_id`` and the boxes at their other ends."""
        out_order, in_order, out_key, in_key = self.adjacency()
        inc = self._edges_of(box_id, in_order, in_key)
        out = self._edges_of(box_id, out_order, out_key)
        edges = self.layout.edges
        others = {edges[i].source for i in inc} | {edges[i].target for i in out}
        others.discard(box_id)
        return Neighbourhood(inc, out, frozenset(others))

    def outgoing(self, box_id: str) -> tuple[int, ...]:
        out_order, _, out_key, _ = self.adjacency()
        return self._edges_of(box_id, out_order, out_key)
