"""Edge-crossing counts of a Layout, fast enough for 100k edges (numpy grid bucketing).

Two measures: (a) between the straight segments joining the centres of connected boxes
(how the dagre/dot figures in the design were counted), and (b) between the drawn
routes (the polylines of ``Edge.points``). Only proper crossings count: segments that
share an endpoint, touch, or overlap collinearly do not.
"""

from __future__ import annotations

import itertools

import numpy as np

from onnxstudio.layout.types import Layout

_MAX_PAIRS_PER_BLOCK = 2_000_000


def _cells(seg: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """(segment index, cell key) for every grid cell each segment's box overlaps,
    splitting long segments into cell-sized pieces first so that a long diagonal does
    not claim its whole bounding box."""
    x1, y1, x2, y2 = seg.T
    length = np.hypot(x2 - x1, y2 - y1)
    parts = np.maximum(1, np.ceil(length / cell)).astype(np.int64)
    idx = np.repeat(np.arange(len(seg)), parts)
    start = np.cumsum(parts) - parts
    k = np.arange(len(idx)) - np.repeat(start, parts)
    t0 = k / np.repeat(parts, parts)
    t1 = (k + 1) / np.repeat(parts, parts)
    dx = (x2 - x1)[idx]
    dy = (y2 - y1)[idx]
    ax, ay = x1[idx] + dx * t0, y1[idx] + dy * t0
    bx, by = x1[idx] + dx * t1, y1[idx] + dy * t1
    cx0 = np.floor(np.minimum(ax, bx) / cell).astype(np.int64)
    cx1 = np.floor(np.maximum(ax, bx) / cell).astype(np.int64)
    cy0 = np.floor(np.minimum(ay, by) / cell).astype(np.int64)
    cy1 = np.floor(np.maximum(ay, by) / cell).astype(np.int64)
    # a piece spans at most 2x2 cells
    keys = []
    owners = []
    for ox in (0, 1):
        for oy in (0, 1):
            cx = cx0 + ox
            cy = cy0 + oy
            ok = (cx <= cx1) & (cy <= cy1)
            keys.append((cx[ok] << 32) + (cy[ok] & 0xFFFFFFFF))
            owners.append(idx[ok])
    key = np.concatenate(keys)
    own = np.concatenate(owners)
    pairs = np.unique(np.stack([key, own], axis=1), axis=0) if len(key) else np.empty((0, 2))
    return pairs[:, 1].astype(np.int64), pairs[:, 0].astype(np.int64)


def _candidate_pairs(owner: np.ndarray, key: np.ndarray) -> np.ndarray:
    order = np.lexsort((owner, key))
    key = key[order]
    owner = owner[order]
    n = len(key)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    new = np.r_[True, key[1:] != key[:-1]]
    group_start = np.maximum.accumulate(np.where(new, np.arange(n), 0))
    group_end = np.r_[np.flatnonzero(new)[1:], n]
    sizes = group_end - np.flatnonzero(new)
    end_of = np.repeat(group_end, sizes)
    count = end_of - np.arange(n) - 1
    del group_start
    total = int(count.sum())
    if total == 0:
        return np.empty((0, 2), dtype=np.int64)
    first = np.repeat(np.arange(n), count)
    offs = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    second = first + 1 + offs
    a = owner[first]
    b = owner[second]
    lo = np.minimum(a, b)
    hi = np.maximum(a, b)
    keep = lo != hi
    pairs = np.stack([lo[keep], hi[keep]], axis=1)
    return np.unique(pairs, axis=0) if len(pairs) else pairs


def _orient(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray,
            cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    return np.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))


def count_segment_crossings(seg: np.ndarray, group: np.ndarray | None = None,
                            ends: np.ndarray | None = None) -> int:
    """Proper crossings among segments ``[[x1, y1, x2, y2], ...]``.

    ``group``: pairs with equal group (pieces of one route) are skipped. ``ends``: two
    endpoint ids per segment; pairs sharing one (edges of the same box) are skipped.
    """
    seg = np.asarray(seg, dtype=np.float64).reshape(-1, 4)
    if len(seg) < 2:
        return 0
    lengths = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    span = max(np.ptp(seg[:, [0, 2]]), np.ptp(seg[:, [1, 3]]), 1.0)
    cell = max(float(np.median(lengths)), span / 2048.0, 1.0)
    owner, key = _cells(seg, cell)
    pairs = _candidate_pairs(owner, key)
    if group is not None and len(pairs):
        pairs = pairs[group[pairs[:, 0]] != group[pairs[:, 1]]]
    if ends is not None and len(pairs):
        e1, e2 = ends[pairs[:, 0]], ends[pairs[:, 1]]
        share = ((e1[:, 0] == e2[:, 0]) | (e1[:, 0] == e2[:, 1])
                 | (e1[:, 1] == e2[:, 0]) | (e1[:, 1] == e2[:, 1]))
        pairs = pairs[~share]
    total = 0
    for k in range(0, len(pairs), _MAX_PAIRS_PER_BLOCK):
        p = pairs[k:k + _MAX_PAIRS_PER_BLOCK]
        s, t = seg[p[:, 0]], seg[p[:, 1]]
        d1 = _orient(s[:, 0], s[:, 1], s[:, 2], s[:, 3], t[:, 0], t[:, 1])
        d2 = _orient(s[:, 0], s[:, 1], s[:, 2], s[:, 3], t[:, 2], t[:, 3])
        d3 = _orient(t[:, 0], t[:, 1], t[:, 2], t[:, 3], s[:, 0], s[:, 1])
        d4 = _orient(t[:, 0], t[:, 1], t[:, 2], t[:, 3], s[:, 2], s[:, 3])
        total += int(np.count_nonzero((d1 * d2 < 0) & (d3 * d4 < 0)))
    return total


def center_crossings(layout: Layout) -> int:
    """Crossings between straight centre-to-centre segments of connected boxes."""
    centre = {b.id: b.center for b in layout.boxes}
    ids = {bid: i for i, bid in enumerate(centre)}
    seen: set[tuple[str, str]] = set()
    seg = []
    ends = []
    for e in layout.edges:
        key = (e.source, e.target)
        if key in seen or e.source not in centre or e.target not in centre:
            continue
        seen.add(key)
        seg.append((*centre[e.source], *centre[e.target]))
        ends.append((ids[e.source], ids[e.target]))
    return count_segment_crossings(np.array(seg), ends=np.array(ends, dtype=np.int64))


def route_crossings(layout: Layout) -> int:
    """Crossings between the drawn routes; identical shared pieces are counted once."""
    seen: set[tuple[float, float, float, float]] = set()
    seg = []
    group = []
    for i, e in enumerate(layout.edges):
        pts = e.points
        for a, b in itertools.pairwise(pts):
            key = (round(a[0], 1), round(a[1], 1), round(b[0], 1), round(b[1], 1))
            if key in seen or key[:2] == key[2:]:
                continue
            seen.add(key)
            seg.append(key)
            group.append(i)
    return count_segment_crossings(np.array(seg), group=np.array(group, dtype=np.int64))
