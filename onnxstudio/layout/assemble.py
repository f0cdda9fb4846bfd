"""The last steps of the compound layout (build.py): absolute positions for every unit's
items and one polyline per edge, then the LR drawing as the TB one transposed.

The polylines are joined on arrays: every piece's route, offset by its unit's origin, in
one float64 array; each edge's points a slice of it, packed as ``Edge`` keeps them
(bytes of x, y pairs), so no list or tuple is made per point, piece or edge.
"""

from __future__ import annotations

from itertools import chain, islice, repeat
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from onnxstudio.concurrency.gil_runs import RUN, fromiter_in_runs
from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout, Point
from onnxstudio.layout.unit_place import IN
from onnxstudio.layout.units import Pieces, Unit

NEAR = 0.01  # a point this close to the last one kept (both axes) is the same point
_PORT = IN[0]  # first character of an entry's or exit's id
_NO_ENDS = np.zeros(0, dtype=np.intp)
_NO_POINTS = np.zeros((0, 2))


def place_items(units: dict[str, Unit], boxes_by_id: dict[str, Box], root: Unit
                ) -> tuple[list[Box], list[GroupFrame], dict[str, Point]]:
    """Boxes at their absolute positions, the frames of the expanded units (by depth,
    then place), and each unit's origin."""
    origin: dict[str, Point] = {root.id: (0.0, 0.0)}
    frames: list[GroupFrame] = []
    stack = [root]
    boxes: list[Box] = []
    while stack:
        unit = stack.pop()
        ox, oy = origin[unit.id]
        res = unit.result
        if res is None:
            continue
        pad_l, pad_t = unit.pad
        for item, x, y in zip(unit.items, res.x, res.y, strict=False):
            px, py = x + pad_l, y + pad_t
            sub = units.get(item)
            if sub is not None:
                origin[item] = (ox + px, oy + py)
                frames.append(GroupFrame(sub.id, sub.label, ox + px, oy + py, sub.width,
                                         sub.height, sub.node_count, list(sub.items),
                                         sub.depth - 1, sub.kind))  # type: ignore[arg-type]
                stack.append(sub)
            else:
                box = boxes_by_id[item]
                box.x, box.y = ox + px, oy + py
                boxes.append(box)
    frames.sort(key=lambda f: (f.depth, f.y, f.x))
    return boxes, frames, origin


class Routes(NamedTuple):
    """Every edge's polyline: its points are rows ``starts[i]:starts[i + 1]`` of ``xy``."""

    xy: np.ndarray  # (points, 2) float64
    starts: np.ndarray  # (edges + 1,) int64
    back: np.ndarray  # (edges,) bool: drawn against the flow


def join_routes(pieces: Pieces, units: list[Unit], origin: dict[str, Point]) -> Routes:
    """Each edge's polyline: its pieces' routes, offset by their units' padding and
    origins, a point dropped when within NEAR of the last one kept (where two pieces
    meet). ``units`` are the build's, in order of ``Unit.num``. Every unit's packed
    routes are gathered in one array: no list per route (``unit_place.route`` is one
    piece's route the same way)."""
    ukeys = pieces.keys
    n, p = len(pieces.sources), len(ukeys)
    results = [u.result for u in units]
    ends = [r.ends if r is not None else _NO_ENDS for r in results]
    unit_edges = fromiter_in_runs(map(len, ends), np.int64, len(units))
    edge_base = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum(unit_edges, out=edge_base[1:])
    # every unit's routes end to end: edge k's points are rows lo[k]:hi[k] of points
    points = np.concatenate([r.points if r is not None else _NO_POINTS for r in results])
    row_base = np.repeat(np.concatenate(([0], np.cumsum(
        [len(r.points) if r is not None else 0 for r in results])))[:-1], unit_edges)
    hi = np.concatenate(ends).astype(np.int64)
    lo = np.empty_like(hi)
    lo[1:] = hi[:-1]
    firsts = edge_base[:-1][unit_edges > 0]
    lo[firsts] = 0
    hi += row_base
    lo += row_base
    back_of = fromiter_in_runs(chain.from_iterable(r.reversed for r in results
                                                   if r is not None), bool, len(hi))
    # each piece's unit and edge in it
    nums = pieces.nums
    at = fromiter_in_runs(map(dict.__getitem__, map(attrgetter("edge_at"), pieces.units),
                              ukeys), np.int64, p)
    edge = edge_base[nums] + at
    lens = hi[edge] - lo[edge]
    piece_of = np.repeat(np.arange(p), lens)
    first_row = np.cumsum(lens) - lens
    rows = lo[edge][piece_of] + np.arange(len(piece_of)) - first_row[piece_of]
    flat = points[rows]
    pads = np.array([u.pad for u in units], dtype=np.float64).reshape(-1, 2)
    flat += pads[nums][piece_of]
    # an entry's route starts at the frame's top, an exit's ends at its bottom
    entry = np.zeros(p, dtype=bool)
    exit_ = np.zeros(p, dtype=bool)
    ported = [ukeys[i] for i in pieces.ports.tolist()]  # the few pieces with a port
    entry[pieces.ports] = [k[0][0] == _PORT for k in ported]
    exit_[pieces.ports] = [k[1][0] == _PORT for k in ported]
    has = lens > 0
    flat[first_row[entry & has], 1] = 0.0
    heights = np.array([u.height for u in units], dtype=np.float64)
    last = (exit_ & has).nonzero()[0]
    flat[first_row[last] + lens[last] - 1, 1] = heights[nums[last]]
    corner = fromiter_in_runs(chain.from_iterable(map(origin.__getitem__,
                                                      map(attrgetter("id"), units))),
                              np.float64, 2 * len(units)).reshape(-1, 2)
    flat += corner[nums][piece_of]
    rev = back_of[edge] & ~entry & ~exit_
    piece_starts = pieces.starts
    back = np.logical_or.reduceat(rev, piece_starts[:-1]) if n else np.zeros(0, bool)
    point_edge = np.repeat(np.repeat(np.arange(n), np.diff(piece_starts)), lens)
    keep = _kept(flat, point_edge)
    counts = np.bincount(point_edge[keep], minlength=n)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return Routes(flat[keep], starts, back)


def _kept(flat: np.ndarray, point_edge: np.ndarray) -> np.ndarray:
    """Which points a walk along each edge keeps: the first, then each one further than
    NEAR (on either axis) from the last one kept. Decided against the previous point on
    arrays, then checked against the last kept one; the rare edge where that differs
    (a run of near points drifting apart) is walked point by point."""
    total = len(flat)
    first = np.ones(total, dtype=bool)
    first[1:] = point_edge[1:] != point_edge[:-1]
    step = np.abs(flat[:-1] - flat[1:])
    keep = first.copy()
    keep[1:] |= (step[:, 0] > NEAR) | (step[:, 1] > NEAR)
    last = np.maximum.accumulate(np.where(keep, np.arange(total), 0))
    prev = np.concatenate([[0], last[:-1]]) if total else last
    gap = np.abs(flat[prev] - flat)
    bad = ~first & (((gap[:, 0] > NEAR) | (gap[:, 1] > NEAR)) != keep)
    for e in np.unique(point_edge[bad]).tolist():
        rows = np.flatnonzero(point_edge == e).tolist()
        lx, ly = flat[rows[0]].tolist()
        for i in rows[1:]:
            x, y = flat[i].tolist()
            keep[i] = abs(lx - x) > NEAR or abs(ly - y) > NEAR
            if keep[i]:
                lx, ly = x, y
    return keep


def make_edges(pieces: Pieces, routes: Routes, swap: bool) -> list[Edge]:
    """The Edges, their routes packed (transposed when ``swap``: the LR drawing). Each
    is made in C from its fields (``Edge`` is a tuple), ``RUN`` at a time so that other
    threads get the GIL between runs (see gil_runs)."""
    xy = routes.xy[:, ::-1] if swap else routes.xy
    blob = np.ascontiguousarray(xy, dtype=np.float64).tobytes()
    ends = (routes.starts * 16).tolist()
    fields = zip(pieces.sources, pieces.targets, pieces.values, pieces.labels,
                 map(blob.__getitem__, map(slice, ends[:-1], ends[1:])),
                 routes.back.tolist(), strict=True)
    edges = map(tuple.__new__, repeat(Edge), fields)
    out: list[Edge] = []
    while len(out) < len(pieces.sources):
        out += islice(edges, RUN)
    return out


def transpose(layout: Layout) -> Layout:
    """The TB drawing (computed with swapped box sizes) mirrored onto the diagonal: LR.
    Its edges come transposed already (``make_edges``)."""
    for box in layout.boxes:
        box.x, box.y, box.width, box.height = box.y, box.x, box.height, box.width
    for fr in layout.groups:
        fr.x, fr.y, fr.width, fr.height = fr.y, fr.x, fr.height, fr.width
    return Layout("LR", layout.height, layout.width, layout.boxes, layout.groups, layout.edges)
