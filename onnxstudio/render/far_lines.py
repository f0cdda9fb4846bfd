"""Edges at a far zoom: one line per pixel path, not one per route segment.

Fitted into a diff's side, BERT-96's layout (1,488 x 362,660 units at 0.0025) hands Qt
31,446 route segments, 22,000 of them inside one pixel and most of the rest drawn over
each other: each ``drawLines`` batch holds the GIL, and a side's first paint took
10-40 ms of the GUI thread. With their ends moved to the centres of the pixels they are
in, they are 3,435 distinct lines and dots over the same pixels, and Qt draws them in
a tenth of the time (numpy's part: 1-2 ms).
"""

from __future__ import annotations

import numpy as np

MIN_SEGMENTS = 512  # fewer are drawn as they are: the rounding would cost about as much


def one_per_pixel(segments: np.ndarray, scale: float) -> np.ndarray:
    """``segments`` (rows x0, y0, x1, y1 in scene units, drawn at ``scale`` pixels per
    unit) with their ends at the centres of their pixels, each distinct line once; a
    segment inside one pixel becomes a half-pixel stroke there (a round-capped dot), one
    per pixel. C-ordered rows, in scene units."""
    if len(segments) < MIN_SEGMENTS or scale <= 0:
        return segments
    pixels = np.floor(segments * scale)  # the pixel each end is in
    grid = (pixels - pixels.min()).astype(np.uint64)
    if int(grid.max()) < 1 << 16:  # a row in one number: unique over a flat array
        key = (grid[:, 0] << 48) | (grid[:, 1] << 32) | (grid[:, 2] << 16) | grid[:, 3]
        _, first = np.unique(key, return_index=True)
        distinct = pixels[first]
    else:  # wider than 65,536 pixels: rows compared as rows (a few times slower)
        distinct = np.unique(pixels, axis=0)
    out = distinct + 0.5  # through the pixels' centres
    dot = (distinct[:, 0] == distinct[:, 2]) & (distinct[:, 1] == distinct[:, 3])
    out[dot, 1] -= 0.25
    out[dot, 3] += 0.25
    return np.ascontiguousarray(out / scale)
