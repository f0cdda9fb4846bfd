"""Which rectangles of one set meet rectangles of another, for all of them at once.

Placing BERT-96's edge labels asked a Python grid 15k times whether a spot covers a box
or straddles a group frame (0.2 s). Both sets are fixed before placing starts, so the
question is answered here for every spot in a few numpy passes: each rectangle is
listed under the grid cells it covers, the lists are joined on the cell, and the pairs
are tested with the same comparisons the grid made. Rectangles are rows (x, y, w, h).
"""

from __future__ import annotations

import numpy as np

CELL = 128.0


def covering(spots: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Per spot: whether some box overlaps it (strictly: touching is not overlapping)."""
    a, b = pairs(spots, boxes)
    s, o = spots[a], boxes[b]
    hit = ((s[:, 0] < o[:, 0] + o[:, 2]) & (o[:, 0] < s[:, 0] + s[:, 2])
           & (s[:, 1] < o[:, 1] + o[:, 3]) & (o[:, 1] < s[:, 1] + s[:, 3]))
    return any_per(a[hit], len(spots))


def straddling(spots: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Per spot: whether it lies partly inside, partly outside some frame. Frames are
    listed under the cells of their outline only (a spot partly inside meets it)."""
    x, y, w, h = (frames[:, k] for k in range(4))
    zero = np.zeros_like(x)
    outline = np.concatenate([np.stack(side, axis=1) for side in (
        (x, y, w, zero), (x, y + h, w, zero), (x, y, zero, h), (x + w, y, zero, h))])
    a, b = pairs(spots, outline)
    s, f = spots[a], frames[b % max(1, len(frames))]  # outline rows: four per frame
    sx1, sy1 = s[:, 0] + s[:, 2], s[:, 1] + s[:, 3]
    fx1, fy1 = f[:, 0] + f[:, 2], f[:, 1] + f[:, 3]
    overlaps = (s[:, 0] < fx1) & (f[:, 0] < sx1) & (s[:, 1] < fy1) & (f[:, 1] < sy1)
    inside = (f[:, 0] <= s[:, 0]) & (sx1 <= fx1) & (f[:, 1] <= s[:, 1]) & (sy1 <= fy1)
    return any_per(a[overlaps & ~inside], len(spots))


def any_per(rows: np.ndarray, count: int) -> np.ndarray:
    out = np.zeros(count, dtype=bool)
    out[rows] = True
    return out


def _cells(rects: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cell key, row) for every grid cell each rectangle covers (its far edge included,
    as ``int((x + w) // CELL)``: the cells the Python grid filed it under)."""
    x0 = np.floor_divide(rects[:, 0], CELL).astype(np.int64)
    y0 = np.floor_divide(rects[:, 1], CELL).astype(np.int64)
    nx = np.floor_divide(rects[:, 0] + rects[:, 2], CELL).astype(np.int64) - x0 + 1
    ny = np.floor_divide(rects[:, 1] + rects[:, 3], CELL).astype(np.int64) - y0 + 1
    per = nx * ny
    rows = np.repeat(np.arange(len(rects)), per)
    k = np.arange(len(rows)) - np.repeat(np.cumsum(per) - per, per)
    cx = x0[rows] + k // ny[rows]
    cy = y0[rows] + k % ny[rows]
    return (cx << 32) + cy, rows  # cells stay within ±2**31 for any drawable layout


def pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (i in a, j in b) that share a grid cell (a pair may repeat)."""
    if not len(a) or not len(b):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ka, ra = _cells(a)
    kb, rb = _cells(b)
    order = np.argsort(kb, kind="stable")
    kb, rb = kb[order], rb[order]
    lo = np.searchsorted(kb, ka, "left")
    count = np.searchsorted(kb, ka, "right") - lo
    total = int(count.sum())
    k = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(ra, count), rb[np.repeat(lo, count) + k]
