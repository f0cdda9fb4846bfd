"""``geometry.polyline_midpoint`` for many routes at once, with the same numbers.

Placing expanded dag100k's edge labels asked it for 38k bent routes one by one (each
route unpacked into tuples, walked in Python: a third of the placement). Here the
routes are walked together, one point position at a time over all routes that long
(numpy; a route has a few to a few hundred points), doing exactly the float operations
the Python walk does in the same order: the lengths with ``math.hypot``, summed and
subtracted one segment after the other, points within 1e-6 of the one kept before
dropped. Labels land where they did, to the bit.
"""

from __future__ import annotations

import math

import numpy as np

Anchors = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # x, y, unit dx, dy


def polyline_anchors(routes: list[bytes], share: float) -> Anchors:
    """Per route (packed float64 x, y pairs, at least one point): the point ``share`` of
    the way along it and the unit direction of its segment there."""
    counts = np.fromiter(map(len, routes), dtype=np.int64, count=len(routes)) >> 4
    flat = np.frombuffer(b"".join(routes), dtype=np.float64).reshape(-1, 2)
    order = np.argsort(-counts, kind="stable")  # longest first: the routes at least k
    start = (np.cumsum(counts) - counts)[order]  # points long are a prefix
    counts = counts[order]
    n = len(routes)
    px, py = flat[start, 0].copy(), flat[start, 1].copy()  # the point kept last
    total = np.zeros(n)
    kept: list[tuple[np.ndarray, ...]] = []  # per point position: routes, a, b, length
    for k in range(1, int(counts[0]) if n else 0):
        m = int(np.searchsorted(-counts, -k, side="left"))  # routes of more than k points
        x, y = flat[start[:m] + k, 0], flat[start[:m] + k, 1]
        ax, ay = px[:m], py[:m]
        on = np.flatnonzero((np.abs(ax - x) > 1e-6) | (np.abs(ay - y) > 1e-6))
        if not len(on):
            continue
        x, y, ax, ay = x[on], y[on], ax[on], ay[on]
        length = np.fromiter(map(math.hypot, (x - ax).tolist(), (y - ay).tolist()),
                             dtype=np.float64, count=len(on))
        total[on] += length
        kept.append((on, ax, ay, x, y, length))
        px[on], py[on] = x, y
    out_x, out_y = flat[start, 0].copy(), flat[start, 1].copy()
    out_dx, out_dy = np.zeros(n), np.ones(n)
    half = total * share
    walking = np.ones(n, dtype=bool)
    for on, ax, ay, bx, by, seg in kept:
        still = walking[on]
        on, ax, ay, bx, by, seg = on[still], ax[still], ay[still], bx[still], by[still], seg[still]
        h = half[on]
        ddx, ddy = bx - ax, by - ay
        out_dx[on], out_dy[on] = ddx / seg, ddy / seg
        hit = (h <= seg) & (seg > 0)
        t = np.where(hit, h / seg, 1.0)
        # a walk that never stops (rounding) ends at the last point kept
        out_x[on] = np.where(hit, ax + ddx * t, bx)
        out_y[on] = np.where(hit, ay + ddy * t, by)
        walking[on[hit]] = False
        half[on] = h - seg
    back = np.argsort(order, kind="stable")
    return out_x[back], out_y[back], out_dx[back], out_dy[back]
