"""Each drawn edge cut into per-unit pieces (build.py's compound layout): up to the exits
of the units it leaves, across the lowest common unit, down from the entries it enters.

Most edges (nine in ten of expanded dag100k's 147k) have both ends in one unit: one
piece, found on arrays. How an edge crosses units depends only on the two units holding
its ends, so it is found once per pair of units, and each crossing edge's keys are made
from it. Each unit counts its pieces' keys at once (``Counter``, in piece order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs, list_in_runs
from onnxstudio.layout.edge_arrays import EdgeLists, gather
from onnxstudio.layout.unit_place import IN, OUT
from onnxstudio.layout.units import Key, Pieces, Unit

# the units an edge leaves (each with the item it exits from, None: its own box), the
# lowest common unit (with the items joined there), the units it enters (and items)
Crossing = tuple[list[tuple[Unit, str | None]], tuple[Unit, str | None, str | None],
                 list[tuple[Unit, str | None]]]
Chain = Callable[[str], list[tuple[Unit, str]]]


def split_edges(found: EdgeLists, units: dict[str, Unit], parent: dict[str, Unit],
                chain: Chain) -> Pieces:
    """The pieces of ``found``'s edges, counted into each unit's ``edges``. ``parent``:
    the unit holding each item; ``chain``: an item's (unit, item of it holding the item)
    from innermost out."""
    sources, targets = found.sources, found.targets
    n = len(sources)
    in_order = list(units.values())  # by Unit.num
    get = parent.get
    if found.codes is not None:  # each box's unit once, then each end's on arrays
        s, d, boxes = found.codes
        of_box = _unit_nums(get, boxes)
        ends = of_box[s], of_box[d]
    else:
        ends = _unit_nums(get, sources), _unit_nums(get, targets)
    cross = np.flatnonzero((ends[0] != ends[1]) | (ends[0] < 0)).tolist()
    us = gather(in_order, np.maximum(ends[0], 0))  # a crossing edge's is replaced
    one = list_in_runs(zip(sources, targets, sources, strict=True))  # a one-piece key
    pieces: list[Unit] = []
    keys: list[Key] = []
    ports: list[int] = []  # pieces from an entry or to an exit
    sizes: list[int] = []  # each crossing edge's number of pieces (no numpy step per edge)
    done = 0
    cuts: dict[tuple[int, int], Crossing | None] = {}
    pairs = zip(ends[0][cross].tolist(), ends[1][cross].tolist(), strict=True)
    for i, pair in zip(cross, pairs, strict=True):
        pieces += us[done:i]
        keys += one[done:i]
        done = i + 1
        if pair not in cuts:
            a, b = pair
            cuts[pair] = _crossing(in_order[a] if a >= 0 else None,
                                   in_order[b] if b >= 0 else None, chain)
        cut = cuts[pair]
        if cut is None:  # never expected
            sizes.append(0)
            continue
        src, dst = sources[i], targets[i]
        exits, (unit, item_s, item_d), entries = cut
        sizes.append(len(exits) + 1 + len(entries))
        out_s = OUT + src
        for u, it in exits:
            ports.append(len(pieces))
            pieces.append(u)
            keys.append((it or src, out_s, src))
        pieces.append(unit)
        keys.append((item_s or src, item_d or dst, src))
        in_s = IN + src
        for u, it in entries:
            ports.append(len(pieces))
            pieces.append(u)
            keys.append((in_s, it or dst, src))
    pieces += us[done:]
    keys += one[done:]
    counts = np.ones(n, dtype=np.int64)
    counts[cross] = sizes
    nums = fromiter_in_runs(map(attrgetter("num"), pieces), np.int64, len(pieces))
    # each unit's keys counted at once, in piece order (Counter keeps first appearances)
    order = np.argsort(nums, kind="stable")
    bounds = np.searchsorted(nums[order], np.arange(len(in_order) + 1)).tolist()
    by_unit = gather(keys, order)
    for unit, lo, hi in zip(in_order, bounds[:-1], bounds[1:], strict=True):
        if hi > lo:  # a piece's key never is a frame's link (whose source is "")
            unit.edges.update(Counter(by_unit[lo:hi]))
    values, labels, codes = found.values, found.labels, found.codes
    kept = counts > 0
    if not kept.all():  # ends in graphs not shown
        rows = np.flatnonzero(kept).tolist()
        sources, targets = [sources[i] for i in rows], [targets[i] for i in rows]
        values, labels = [values[i] for i in rows], [labels[i] for i in rows]
        counts = counts[kept]
        codes = None if codes is None else (codes[0][kept], codes[1][kept], codes[2])
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return Pieces(sources, targets, values, labels, pieces, keys, starts, nums,
                  np.asarray(ports, dtype=np.int64), codes)


def _crossing(a: Unit | None, b: Unit | None, chain: Chain) -> Crossing | None:
    """How an edge from a box in unit ``a`` to one in ``b`` (another unit) is cut: the
    units it leaves (each with the item its exit piece starts from, None for the box
    itself), the lowest common unit with the items the edge joins there, and the units
    it enters (with the item each entry piece ends at). None: the chains of units
    holding them never meet (or an end is not shown)."""
    if a is None or b is None:
        return None
    cs: list[tuple[Unit, str | None]] = [(a, None), *chain(a.id)]
    cd: list[tuple[Unit, str | None]] = [(b, None), *chain(b.id)]
    units_d = {id(u): i for i, (u, _) in enumerate(cd)}
    for k, (unit, item) in enumerate(cs):
        j = units_d.get(id(unit))
        if j is not None:
            return cs[:k], (unit, item, cd[j][1]), cd[:j][::-1]
    return None


def _unit_nums(get: Callable[..., Unit | None], boxes: list[str]) -> np.ndarray:
    """The number of the unit holding each box (-1: none)."""
    return fromiter_in_runs(map(getattr, map(get, boxes), repeat("num"), repeat(-1)),
                            np.int64, len(boxes))
