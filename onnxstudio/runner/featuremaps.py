"""Turn an activation into pictures and tables a person can read (no Qt here).

A convolution output is a stack of small 2-D maps; looking at them side by side shows
which channels fire where, which are dead (all zero) and which blew up (NaN/Inf) far
faster than scrolling numbers. ``feature_map_grid`` lays the channels out as one
grayscale mosaic; ``table_slice`` picks the 2-D slice a value table shows of any tensor.
Both are pure numpy so they can be tested, and reused, without a display.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_TILE = 48  # smallest side (px) a map is enlarged to, so a 7x7 map is legible
MAX_WIDTH = 2048  # the mosaic is laid out to stay within this many pixels across
GAP = 2  # separator between tiles (and around the mosaic), in mosaic pixels
SCALES = ("per-map", "global")
_CONSTANT = 128  # a constant non-zero map: mid-grey (all-zero maps stay black)


@dataclass(frozen=True)
class Tile:
    """Where one channel sits in the mosaic, with the finite range of its values."""

    channel: int
    x: int
    y: int
    w: int
    h: int
    lo: float | None = None  # finite min of the whole map (None: no finite value)
    hi: float | None = None

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.w and self.y <= y < self.y + self.h


@dataclass
class FeatureGrid:
    """A mosaic of channels and the geometry needed to map a mouse position back."""

    image: np.ndarray  # uint8 (H, W) grayscale
    tiles: list[Tile]
    shown: int  # channels in the mosaic
    total: int  # channels in the tensor
    cell: int  # mosaic pixels per map pixel (integer nearest-neighbour zoom)
    step: int = 1  # map pixels per mosaic pixel when maps wider than the cap are thinned
    columns: int = 1
    gap: int = GAP
    scale: str = "per-map"
    batch: int = 0

    def tile(self, x: int, y: int) -> Tile | None:
        """The tile under mosaic pixel (x, y); None over a gap or outside."""
        if not self.tiles or x < self.gap or y < self.gap:
            return None
        first = self.tiles[0]  # every tile has the same size
        col = (x - self.gap) // (first.w + self.gap)
        row = (y - self.gap) // (first.h + self.gap)
        i = row * self.columns + col
        if col >= self.columns or i >= len(self.tiles):
            return None
        t = self.tiles[i]
        return t if t.contains(x, y) else None

    def tile_at(self, x: int, y: int) -> int | None:
        """Channel under mosaic pixel (x, y); None over a gap or outside."""
        t = self.tile(x, y)
        return None if t is None else t.channel

    def pixel_at(self, x: int, y: int) -> tuple[int, int, int] | None:
        """(channel, row, column) in the source map under mosaic pixel (x, y)."""
        t = self.tile(x, y)
        if t is None:
            return None
        return (t.channel, (y - t.y) // self.cell * self.step,
                (x - t.x) // self.cell * self.step)


def _maps(arr: np.ndarray, batch: int) -> np.ndarray:
    a = np.asarray(arr)
    if a.ndim == 4:
        if not 0 <= batch < a.shape[0]:
            raise IndexError(f"batch {batch} is out of range for {a.shape[0]} batch entries")
        a = a[batch]
    elif a.ndim != 3:
        raise ValueError(f"feature maps need a 4-D (N, C, H, W) or 3-D (C, H, W) tensor, "
                         f"not {a.ndim}-D {list(a.shape)}")
    if a.dtype.kind not in "fiub":
        raise ValueError(f"feature maps need numbers, not {a.dtype}")
    if 0 in a.shape:
        raise ValueError(f"no feature maps in an empty tensor {list(a.shape)}")
    return a


def _finite_range(m: np.ndarray) -> tuple[float, float] | None:
    finite = np.isfinite(m)
    if finite.all():
        return float(m.min()), float(m.max())
    if not finite.any():
        return None
    f = m[finite]
    return float(f.min()), float(f.max())


def _to_uint8(m: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    """Map [lo, hi] to 0..255; NaN and -Inf black, +Inf white; a constant map is black
    when it is all zero (a dead channel) and mid-grey otherwise."""
    x = m.astype(np.float64, copy=False)
    out = np.zeros(x.shape, dtype=np.uint8)
    finite = np.isfinite(x)
    out[np.isposinf(x)] = 255
    if lo is None or hi is None:
        return out
    if hi > lo:
        # Halves keep hi - lo finite even for values near the float64 limit.
        with np.errstate(all="ignore"):
            scaled = (x * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5) * 255.0
        scaled = np.where(finite, scaled, 0.0)
        out[finite] = np.clip(np.rint(scaled[finite]), 0, 255).astype(np.uint8)
    else:
        out[finite] = 0 if lo == 0 else _CONSTANT
    return out


def _columns(n: int, tw: int, th: int) -> int:
    """Columns that make n tiles of tw x th a near-square mosaic."""
    return max(1, min(n, math.ceil(math.sqrt(n * th / tw))))


def _width(columns: int, tw: int, gap: int) -> int:
    return columns * (tw + gap) + gap


def feature_map_grid(arr: np.ndarray, batch: int = 0, max_maps: int = 64,
                     tile: int | None = None, scale: str = "per-map", *,
                     max_width: int = MAX_WIDTH, gap: int = GAP,
                     background: int = 255) -> FeatureGrid:
    """Lay the first ``max_maps`` channels of ``arr`` out as one grayscale mosaic.

    ``arr`` is N x C x H x W (``batch`` picks N) or C x H x W. Each map is enlarged by
    an integer factor (nearest neighbour: a pixel stays a pixel) so its smaller side is
    at least 48 px and at most about ``tile`` px, picking the size that best fills
    ``max_width`` in a near-square arrangement (fewer columns where that is too wide);
    maps wider than ``max_width`` are thinned to every n-th pixel. ``scale`` "per-map"
    stretches each map over 0..255 (structure of weak channels stays visible); "global"
    uses one range for all shown maps (their strengths stay comparable).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, not {scale!r}")
    if max_maps < 1:
        raise ValueError("max_maps must be at least 1")
    maps = _maps(arr, batch)
    total, h, w = (int(d) for d in maps.shape)
    shown = min(total, max_maps)
    gap = max(0, gap)
    max_width = max(max_width, 1)

    step = max(1, math.ceil(w / max(1, max_width - 2 * gap)))
    sh, sw = -(-h // step), -(-w // step)  # size of a thinned map
    side = min(sh, sw)
    want = MIN_TILE if tile is None else max(1, tile)
    zoom_min = max(1, math.ceil(min(want, MIN_TILE) / side))
    zoom_want = max(zoom_min, math.ceil(want / side))
    # One map must fit across. Within [legible minimum, target] take the zoom whose
    # arrangement (near-square, or fewer columns where that is too wide) fills the most
    # of max_width: bigger maps where there is room, never a sliver of a mosaic.
    zoom_fit_one = max(1, (max_width - 2 * gap) // sw)
    square = _columns(shown, sw, sh)

    def columns_at(z: int) -> int:
        return min(square, max(1, (max_width - gap) // (sw * z + gap)))

    candidates = range(min(zoom_min, zoom_fit_one), min(zoom_want, zoom_fit_one) + 1)
    zoom = max(candidates, key=lambda z: (_width(columns_at(z), sw * z, gap), -z))
    tw, th = sw * zoom, sh * zoom
    columns = columns_at(zoom)
    rows = -(-shown // columns)

    image = np.full((rows * (th + gap) + gap, _width(columns, tw, gap)),
                    np.uint8(np.clip(background, 0, 255)), dtype=np.uint8)
    ranges = [_finite_range(np.asarray(maps[c], dtype=np.float64)) for c in range(shown)]
    known = [r for r in ranges if r is not None]
    shared = (min(r[0] for r in known), max(r[1] for r in known)) if known else None
    tiles: list[Tile] = []
    for c in range(shown):
        r = ranges[c]
        lo, hi = (shared if scale == "global" else r) or (None, None)
        pixels = _to_uint8(np.asarray(maps[c])[::step, ::step], lo, hi)
        if zoom > 1:
            pixels = pixels.repeat(zoom, axis=0).repeat(zoom, axis=1)
        x = gap + (c % columns) * (tw + gap)
        y = gap + (c // columns) * (th + gap)
        image[y:y + th, x:x + tw] = pixels
        tiles.append(Tile(c, x, y, tw, th, *(r or (None, None))))
    return FeatureGrid(image, tiles, shown, total, zoom, step, columns, gap, scale,
                       batch if np.ndim(arr) == 4 else 0)


def table_slice(arr: np.ndarray, leading: Sequence[int]) -> np.ndarray:
    """The 2-D view a value table shows: 0-D as 1x1, 1-D as one column, 2-D as is,
    N-D as ``arr[leading]`` over the last two dims (a view: nothing is copied)."""
    a = np.asarray(arr)
    want = max(0, a.ndim - 2)
    if len(leading) != want:
        raise ValueError(f"a {a.ndim}-D tensor needs {want} leading indices, "
                         f"got {len(leading)}")
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(-1, 1)
    index = []
    for dim, (i, n) in enumerate(zip(leading, a.shape, strict=False)):
        i = int(i)
        if not 0 <= i < n:
            raise IndexError(f"index {i} is out of range for dim {dim} of size {n}")
        index.append(i)
    return a[tuple(index)]
