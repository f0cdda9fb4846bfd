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
    same = seg[1:] == seg[:-1]
    while True:
        block = np.cumsum(first) - 1
        # bincount sums each block in order (reduceat's pairwise sums would make a
        # unit's numbers depend on where its blocks sit in the batch)
        mean = np.bincount(block, wt) / np.bincount(block, weight)
        starts = np.flatnonzero(first)
        viol = mean[:-1] > mean[1:]
        viol &= same[starts[1:] - 1]
        if not viol.any():
            return mean[block]
        first[starts[1:][viol]] = False


class _Layer:
    """One layer index of every unit: its items left to right, links above and below."""

    def __init__(self, f: Flat, items: Ints, index: Ints, up: Ints, down: Ints,
                 last: np.ndarray) -> None:
        self.items = items
        self.unit = f.unit[items]
        self.last = last[items]  # in its unit's last layer: no upward sweep moves it
        self.up = up
        self.up_to = index[f.dst[up]]
        self.down = down
        self.down_to = index[f.src[down]]
        n = len(items)
        self.den_up = np.bincount(self.up_to, f.w[up], minlength=n)
        self.den_down = np.bincount(self.down_to, f.w[down], minlength=n)


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
    layers: list[_Layer] = []
    for li in range(f.nlayers):
        items = order[layer_of == li]
        index[items] = np.arange(len(items))
        layers.append(_Layer(f, items, index, np.flatnonzero(src_layer == li - 1),
                             np.flatnonzero(src_layer == li), last))
    src_out = oport[f.src]  # where a link leaves its source, from its centre
    dst_in = iport[f.dst]

    def place(lay: _Layer, use_up: bool, use_down: bool) -> None:
        n = len(lay.items)
        if not n:
            return
        num = np.zeros(n)
        den = np.zeros(n)
        if use_up:
            up = lay.up
            num += np.bincount(lay.up_to, f.w[up] * (x[f.src[up]] + src_out[up] - dst_in[up]),
                               minlength=n)
            den += lay.den_up
        if use_down:
            dn = lay.down
            num += np.bincount(lay.down_to,
                               f.w[dn] * (x[f.dst[dn]] + dst_in[dn] - src_out[dn]),
                               minlength=n)
            den += lay.den_down
        s = sep[lay.items]
        has = den > 0
        target = np.where(has, num / np.where(has, den, 1.0), x[lay.items]) - s
        weight = np.where(has, den, 0.05)
        if use_up:
            x[lay.items] = pava_segments(target, weight, lay.unit) + s
        else:  # coords sweeps up from each unit's last layer but one
            keep = ~lay.last
            x[lay.items[keep]] = pava_segments(target[keep], weight[keep],
                                               lay.unit[keep]) + s[keep]

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
