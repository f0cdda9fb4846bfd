"""Many units' x placement at once: ``coords.x_coords``'s isotonic sweeps as numpy steps.

Each step places one layer index of every unit of the batch: the weighted mean of each
item's neighbours (port offsets included) less its packed offset is fitted, per unit, by
a non-decreasing sequence (pool adjacent violators, every violating run of blocks of
every unit merged at once until none is left), so the layer keeps its order and spacing.
The snapping of chains that follows stays per unit (``coords``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from onnxstudio.layout.batch_order import Flat, Ints
from onnxstudio.layout.coords import DUMMY_SEP, NODE_SEP, SWEEPS


def pava_segments(target: np.ndarray, weight: np.ndarray, seg: Ints) -> np.ndarray:
    """Weighted isotonic least-squares fit of each run of equal ``seg`` (sorted)."""
    n = len(target)
    if n < 2:
        return target
    first = np.ones(n, dtype=bool)  # where a block starts
    wt = weight * target
    joins = np.empty(n, dtype=bool)  # whether an item's block may join the one before
    joins[0] = False
    np.equal(seg[1:], seg[:-1], out=joins[1:])
    while True:
        block = np.cumsum(first) - 1
        # bincount sums each block in order (reduceat's pairwise sums would make a
        # unit's numbers depend on where its blocks sit in the batch)
        mean = np.bincount(block, wt) / np.bincount(block, weight)
        starts = np.flatnonzero(first)
        viol = mean[:-1] > mean[1:]
        viol &= joins[starts[1:]]
        if not viol.any():
            return mean[block]
        first[starts[1:][viol]] = False


class _Side:
    """What placing one layer with one choice of sides reads that x does not change:
    the fitted items (a downward-placed unit's last layer stays), their packed offsets,
    segments and weights."""

    def __init__(self, lay: _Layer, den: np.ndarray, keep: np.ndarray | None) -> None:
        self.keep = keep
        sel = slice(None) if keep is None else keep
        den = den[sel]
        self.items = lay.items[sel]
        self.sep = lay.sep[sel]
        self.unit = lay.unit[sel]
        self.has = den > 0
        self.den = np.where(self.has, den, 1.0)
        self.weight = np.where(self.has, den, 0.05)


class _Layer:
    """One layer index of every unit: its items left to right, links above and below
    (each link's weight, far end and port offsets gathered once)."""

    def __init__(self, f: Flat, items: Ints, index: Ints, up: Ints, down: Ints,
                 last: np.ndarray, sep: np.ndarray, src_out: np.ndarray,
                 dst_in: np.ndarray) -> None:
        self.items = items
        self.unit = f.unit[items]
        self.sep = sep[items]
        n = len(items)
        self.up_to = index[f.dst[up]]
        self.up_w, self.up_far = f.w[up], f.src[up]
        self.up_out, self.up_in = src_out[up], dst_in[up]
        self.down_to = index[f.src[down]]
        self.down_w, self.down_far = f.w[down], f.dst[down]
        self.down_in, self.down_out = dst_in[down], src_out[down]
        den_up = np.bincount(self.up_to, self.up_w, minlength=n)
        den_down = np.bincount(self.down_to, self.down_w, minlength=n)
        # in its unit's last layer: no upward sweep moves it
        self.sides = {(True, False): _Side(self, den_up, None),
                      (False, True): _Side(self, den_down, ~last[items]),
                      (True, True): _Side(self, den_up + den_down, None)}


def place_batch(f: Flat, pos: Ints, widths: np.ndarray, dummy: np.ndarray,
                oport: np.ndarray, iport: np.ndarray) -> np.ndarray:
    """Centre x of every item (each unit's layers packed from 0), as ``x_coords`` places
    them before snapping."""
    order = f.order(pos)
    half = widths / 2.0
    # packed offsets, each item's distance from its layer's first one: summed slot by
    # slot as coords does, so a unit's numbers do not depend on the rest of its batch
    sep = np.zeros(f.size)
    slot_item = order  # slot -> item: segments are numbered unit after unit
    slot_seg = f.seg[order]
    at_pos = np.arange(f.size) - f.seg_start[slot_seg]
    by_pos = np.argsort(at_pos, kind="stable")
    ends = np.cumsum(np.bincount(at_pos, minlength=1))
    for p in range(1, len(ends)):
        slots = by_pos[ends[p - 1]:ends[p]]
        b = slot_item[slots]
        a = slot_item[slots - 1]
        gap = np.where(dummy[a] | dummy[b], DUMMY_SEP, NODE_SEP)
        sep[b] = sep[a] + (half[a] + half[b] + gap)
    x = sep.copy()
    index = np.empty(f.size, dtype=np.intp)
    layer_of = f.layer[order]
    src_layer = f.layer[f.src]
    deepest = np.zeros(len(f.base) - 1, dtype=np.intp)
    np.maximum.at(deepest, f.unit, f.layer)
    last = f.layer == deepest[f.unit]
    src_out = oport[f.src]  # where a link leaves its source, from its centre
    dst_in = iport[f.dst]
    layers: list[_Layer] = []
    for li in range(f.nlayers):
        items = order[layer_of == li]
        index[items] = np.arange(len(items))
        layers.append(_Layer(f, items, index, np.flatnonzero(src_layer == li - 1),
                             np.flatnonzero(src_layer == li), last, sep, src_out, dst_in))

    def place(lay: _Layer, use_up: bool, use_down: bool) -> None:
        n = len(lay.items)
        if not n:
            return
        if use_up:
            num = np.bincount(lay.up_to, lay.up_w * (x[lay.up_far] + lay.up_out - lay.up_in),
                              minlength=n)
        if use_down:
            down = np.bincount(lay.down_to,
                               lay.down_w * (x[lay.down_far] + lay.down_in - lay.down_out),
                               minlength=n)
            num = num + down if use_up else down
        side = lay.sides[(use_up, use_down)]
        if side.keep is not None:  # coords sweeps up from each unit's last layer but one
            num = num[side.keep]
        s = side.sep
        target = np.where(side.has, num / side.den, x[side.items]) - s
        x[side.items] = pava_segments(target, side.weight, side.unit) + s

    for _ in range(SWEEPS):
        for lay in layers[1:]:
            place(lay, True, False)
        for lay in layers[-2::-1]:
            place(lay, False, True)
    for lay in layers:
        place(lay, True, True)
    return x


def unit_slices(f: Flat, values: np.ndarray) -> list[list[float]]:
    """Per unit, its items' values as a list."""
    flat = values.tolist()
    bounds: Sequence[int] = f.base.tolist()
    return [flat[bounds[u]:bounds[u + 1]] for u in range(len(bounds) - 1)]
