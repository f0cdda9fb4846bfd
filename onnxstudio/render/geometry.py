"""Edge geometry: smooth curves through routed bend points, arrowheads, label anchors.

Pure Python on tuples (no Qt, no numpy) because it runs per visible edge and the inputs
are short lists; the same numbers feed every backend.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from onnxstudio.render.drawing import Cubic, Point

ARROW_LENGTH = 7.0
ARROW_HALF_WIDTH = 3.5


def smooth_curve(points: Sequence[Point]) -> tuple[Point, list[Cubic]]:
    """A uniform cubic B-spline through a polyline, as Bézier segments (d3's curveBasis).

    Chosen over Catmull-Rom because it never overshoots the bends the router chose, so
    a curve stays inside the channel between boxes; it still starts and ends exactly at
    the first and last point, where the edge meets its boxes.
    """
    pts = _dedupe(points)
    if len(pts) >= THIN_FROM:
        pts = _thinned(pts)
    if len(pts) < 2:
        p = pts[0] if pts else (0.0, 0.0)
        return p, []
    if len(pts) == 2:
        a, b = pts
        return a, [(a, b, b)]
    start = pts[0]
    x0, y0 = pts[0]
    x1, y1 = pts[1]
    # lineTo((5*p0 + p1)/6)
    at = ((5 * x0 + x1) / 6, (5 * y0 + y1) / 6)
    segs: list[Cubic] = [(start, at, at)]
    was = start  # where the last segment starts
    along = line = False  # the last three points run along an axis; the last segment too
    for x, y in pts[2:]:
        end = ((x0 + 4 * x1 + x) / 6, (y0 + 4 * y1 + y) / 6)
        # Four points on one vertical (horizontal) line, onwards: this segment is a piece
        # of that line. After another such, one line covers both: a skip connection down
        # a hundred layers is a few segments instead of two hundred (the same drawing).
        was_along, along = along, ((x0 == x1 == x and (y1 - y0) * (y - y1) > 0)
                                   or (y0 == y1 == y and (x1 - x0) * (x - x1) > 0))
        if along and was_along:
            if line:
                segs[-1] = (was, end, end)
            else:
                segs.append((at, end, end))
                was, line = at, True
        else:
            segs.append(
                (((2 * x0 + x1) / 3, (2 * y0 + y1) / 3), ((x0 + 2 * x1) / 3, (y0 + 2 * y1) / 3),
                 end))
            was, line = at, False
        at = end
        x0, y0, x1, y1 = x1, y1, x, y
    segs.append(
        (
            ((2 * x0 + x1) / 3, (2 * y0 + y1) / 3),
            ((x0 + 2 * x1) / 3, (y0 + 2 * y1) / 3),
            ((x0 + 5 * x1) / 6, (y0 + 5 * y1) / 6),
        )
    )
    end = (x1, y1)
    last = segs[-1][2]
    segs.append((last, end, end))
    return start, segs


# The points of a straight run the curve needs: the first four and the last three.
_RUN_KEPT = 8
THIN_FROM = 48  # points: shorter routes are smoothed as they are (thinning costs a pass)


def _thinned(pts: list[Point]) -> list[Point]:
    """``pts`` less the middle of every run of steps in one direction along an axis:
    the curve is one line segment there, fixed by the run's first four points and its
    last three (see smooth_curve), so it comes out the same from fewer points. A skip
    connection down a hundred layers: 200 points to smooth, then 10."""
    out: list[Point] = []
    run: list[Point] = []  # the current run's points, its first one included
    way = 0
    px, py = pts[0]
    for x, y in itertools.islice(pts, 1, None):
        step = (1 if y > py else 2) if x == px and y != py else \
            (3 if x > px else 4) if y == py and x != px else 0
        if step and step == way:
            run.append((x, y))
        else:
            _flush(out, run)
            run = [(px, py), (x, y)]
            way = step
        px, py = x, y
    _flush(out, run)
    return out


def _flush(out: list[Point], run: list[Point]) -> None:
    """Append a run's points to ``out`` (its first one unless ``out`` ends with it),
    the middle left out of a long one."""
    if not run:
        return
    if len(run) >= _RUN_KEPT:
        run = [*run[:4], *run[-3:]]
    out.extend(run[1:] if out else run)


def _dedupe(points: Sequence[Point]) -> list[Point]:
    """The points as float pairs, each within 1e-6 of the one before dropped."""
    if not points:
        return []
    px, py = float(points[0][0]), float(points[0][1])
    out: list[Point] = [(px, py)]
    for x, y in itertools.islice(points, 1, None):  # a float minus an int is exact here
        if abs(px - x) > 1e-6 or abs(py - y) > 1e-6:
            px, py = float(x), float(y)
            out.append((px, py))
    return out


def end_direction(start: Point, segs: Sequence[Cubic]) -> tuple[float, float]:
    """Unit vector of the curve's direction where it arrives."""
    if not segs:
        return (0.0, 1.0)
    end = segs[-1][2]
    prev = start if len(segs) == 1 else segs[-2][2]
    for cand in (segs[-1][1], segs[-1][0], prev):
        dx, dy = end[0] - cand[0], end[1] - cand[1]
        n = math.hypot(dx, dy)
        if n > 1e-6:
            return (dx / n, dy / n)
    return (0.0, 1.0)


def trim_end(start: Point, segs: list[Cubic], length: float,
             direction: tuple[float, float] | None = None) -> list[Cubic]:
    """Pull the last point back by ``length`` so the line stops at the arrowhead's base
    (``direction``: the curve's :func:`end_direction`, if the caller has it already)."""
    if not segs:
        return segs
    ux, uy = direction or end_direction(start, segs)
    c1, c2, end = segs[-1]
    new_end = (end[0] - ux * length, end[1] - uy * length)
    seg_start = start if len(segs) == 1 else segs[-2][2]
    # Keep the control points from passing the new end on very short last segments.
    if math.hypot(end[0] - seg_start[0], end[1] - seg_start[1]) <= length:
        return [*segs[:-1], (seg_start, new_end, new_end)]
    c2n = c2 if c2 != end else new_end
    return [*segs[:-1], (c1, c2n, new_end)]


def straight_edge(a: Point, b: Point, length: float
                  ) -> tuple[Point, list[Cubic], list[Point]] | None:
    """A two-point route as drawn: start, route trimmed by ``length``, arrowhead; the
    numbers smooth_curve, end_direction, trim_end and arrowhead give it (most edges are
    straight: BERT-96's 5,006 of 7,320), at a fifth of the cost. None when the points
    coincide (the general path handles that)."""
    ax, ay, bx, by = float(a[0]), float(a[1]), float(b[0]), float(b[1])
    dx, dy = bx - ax, by - ay
    if not (abs(dx) > 1e-6 or abs(dy) > 1e-6):
        return None
    n = math.hypot(dx, dy)
    ux, uy = dx / n, dy / n
    start, new_end = (ax, ay), (bx - ux * length, by - uy * length)
    return start, [(start, new_end, new_end)], arrowhead((bx, by), (ux, uy))


def arrowhead(tip: Point, direction: tuple[float, float]) -> list[Point]:
    """Triangle with its point at ``tip`` facing ``direction``."""
    ux, uy = direction
    bx, by = tip[0] - ux * ARROW_LENGTH, tip[1] - uy * ARROW_LENGTH
    nx, ny = -uy * ARROW_HALF_WIDTH, ux * ARROW_HALF_WIDTH
    return [tip, (bx + nx, by + ny), (bx - nx, by - ny)]


def polyline_midpoint(points: Sequence[Point],
                      share: float = 0.5) -> tuple[Point, tuple[float, float]]:
    """Point ``share`` of the way along a polyline (halfway by default), with the unit
    direction of the segment there.
    Points within 1e-6 of the one kept before are dropped, as by _dedupe, in the same
    pass that measures the segments (a label is placed for every edge: 60 ms of
    BERT-96's export went to building the deduplicated lists first)."""
    if len(points) == 2:  # most edges: the general path below, unrolled (same numbers)
        (ax, ay), (bx, by) = points
        dx, dy = bx - ax, by - ay
        if abs(dx) > 1e-6 or abs(dy) > 1e-6:
            seg = math.hypot(dx, dy)
            return (ax + dx * share, ay + dy * share), (dx / seg, dy / seg)
    if not points:
        return (0.0, 0.0), (0.0, 1.0)
    px, py = float(points[0][0]), float(points[0][1])
    kept: list[Point] = [(px, py)]
    lengths: list[float] = []
    total = 0.0  # added in order, never sum(): Python 3.12's sum() compensates, numpy's
    for x, y in itertools.islice(points, 1, None):  # anchors (render/anchors.py) do not
        if abs(px - x) > 1e-6 or abs(py - y) > 1e-6:
            lengths.append(seg := math.hypot(x - px, y - py))
            total += seg
            px, py = float(x), float(y)
            kept.append((px, py))
    if not lengths:
        return kept[0], (0.0, 1.0)
    half = total * share
    for (a, b), seg in zip(itertools.pairwise(kept), lengths, strict=True):
        if half <= seg and seg > 0:
            t = half / seg
            d = ((b[0] - a[0]) / seg, (b[1] - a[1]) / seg)
            return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t), d
        half -= seg
    a, b = kept[-2], kept[-1]
    seg = lengths[-1] or 1.0
    return b, ((b[0] - a[0]) / seg, (b[1] - a[1]) / seg)


def label_anchor(points: Sequence[Point],
                 share: float = 0.5) -> tuple[Point, tuple[float, float]]:
    """Where an edge's shape label sits (halfway, as in Netron, or ``share`` of the way
    when halfway is taken) and the direction there."""
    return polyline_midpoint(points, share)
