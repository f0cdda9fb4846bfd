"""Many units' layer orderings at once: the engine's ordering phase as numpy operations.

Expanded dag100k lays out 1,476 independent units of ~100 items each; looping over their
items in Python (``ordering.py``) costs more than all else of the engine. Here every unit
of one batch is one set of flat arrays (items, links, layers as segments), and each
step is a handful of numpy operations over all of them: a median sweep is one step per
layer index, a transposition round one step per layer parity and position parity (odd-
even transposition: pairs that share no item or neighbouring layer are decided at once).
The semantics follow ``ordering.order_layers``: medians of neighbours' positions plus
port offsets, items without neighbours keep their slot, the best ordering by weighted
crossings is kept per unit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from onnxstudio.concurrency.gil_runs import fromiter_in_runs
from onnxstudio.layout.batch_rank import Ranked, ranges
from onnxstudio.layout.ordering import ORDER_SWEEPS, LayoutCancelled, port_slots
from onnxstudio.layout.unit_place import DagInputs

TRANSPOSE_ROUNDS = 2  # odd-even rounds after each sweep (a third: 0.3 % fewer crossings)

Ints = np.ndarray
_NONE = (0.0, 0.0)


@dataclass
class Flat:
    """Every unit of a batch as flat arrays: items are numbered unit after unit."""

    base: Ints  # first item of each unit (and the total at the end)
    unit: Ints  # item -> unit
    layer: Ints  # item -> its unit's layer
    seg: Ints  # item -> segment (one unit's layer), numbered unit after unit
    seg_start: Ints  # segment -> first slot; slots hold a segment's items in order
    seg_len: Ints
    pos: Ints  # item -> position in its layer
    src: Ints  # links (each between neighbouring layers), grouped by source item
    dst: Ints
    w: np.ndarray
    fa: np.ndarray  # port offset at the source's bottom, in slots
    fb: np.ndarray  # port offset at the target's top
    nlayers: int

    @property
    def size(self) -> int:
        return len(self.unit)

    def order(self, pos: Ints) -> Ints:
        """Items by segment, then position: each unit's layers, left to right."""
        return np.lexsort((pos, self.seg))


def _initial_positions(r: Ranked, seg: Ints, seg_start: Ints) -> Ints:
    """``ordering.initial_layers`` of every unit: one depth-first walk over the batch's
    links (each unit's sources in index order, then all its items), each item's place
    in its layer that of its visit among the layer's items."""
    size = r.size
    local = np.arange(size) - r.base[:-1][r.unit]
    sources = np.flatnonzero((local < r.n[r.unit]) & (np.bincount(r.dst, minlength=size) == 0))
    starts = np.concatenate((sources, np.arange(size)))
    phase = np.concatenate((np.zeros(len(sources), dtype=np.intp), np.ones(size, dtype=np.intp)))
    starts = starts[np.lexsort((starts, phase, r.unit[starts]))].tolist()
    first = np.concatenate(([0], np.cumsum(r.links_per_item()))).tolist()
    dst = r.dst.tolist()
    seen = bytearray(size)
    visit: list[int] = []
    push = visit.append
    for s in starts:
        if seen[s]:
            continue
        stack = [s]
        pop = stack.pop
        while stack:
            v = pop()
            if seen[v]:
                continue
            seen[v] = 1
            push(v)
            a = first[v]
            b = first[v + 1]
            if b - a == 1:  # most items: no list to make
                w = dst[a]
                if not seen[w]:
                    stack.append(w)
            elif b > a:
                stack.extend([w for w in reversed(dst[a:b]) if not seen[w]])
    order = fromiter_in_runs(visit, np.intp, size)
    by_seg = order[np.argsort(seg[order], kind="stable")]
    pos = np.empty(size, dtype=np.intp)
    pos[by_seg] = np.arange(size) - seg_start[seg[by_seg]]
    return pos


def has_offsets(a: DagInputs) -> bool:
    """Whether any edge of the unit is attached at a fixed port."""
    return a.src_off.count(None) < len(a.src_off) or a.dst_off.count(None) < len(a.dst_off)


def flatten(r: Ranked, inputs: Sequence[DagInputs]) -> Flat:
    """The batch's arrays: its ranked units, their initial orders and port slots (only
    units with fixed ports have any: theirs are looked up on their own DAG)."""
    seg_base = np.concatenate(([0], np.cumsum(r.nranks)))
    seg = seg_base[r.unit] + r.rank
    seg_len = np.bincount(seg, minlength=int(seg_base[-1]))
    seg_start = np.cumsum(seg_len) - seg_len
    fa = np.zeros(len(r.src))
    fb = np.zeros(len(r.src))
    for u, a in enumerate(inputs):
        if not has_offsets(a):
            continue
        pt = port_slots(r.unit_dag(u, links=False), a.edges, a.widths, a.src_off, a.dst_off)
        if pt:
            lo = r.base[u]
            la, lb = r.links_of(u)
            offs = [pt.get(k, _NONE) for k in zip((r.src[la:lb] - lo).tolist(),
                                                  (r.dst[la:lb] - lo).tolist(), strict=True)]
            fa[la:lb] = [o[0] for o in offs]
            fb[la:lb] = [o[1] for o in offs]
    return Flat(r.base, r.unit, r.rank, seg, seg_start, seg_len,
                _initial_positions(r, seg, seg_start), r.src, r.dst, r.w, fa, fb,
                int(r.nranks.max(initial=0)))


class _Csr:
    """Links grouped by one end item: each item's links are ``start .. start+count``."""

    def __init__(self, key: Ints, size: int) -> None:
        self.perm = np.argsort(key, kind="stable")
        self.count = np.bincount(key, minlength=size)
        self.start = np.cumsum(self.count) - self.count


class _Median:
    """One layer's items and the links to the layer a sweep just fixed; what each sweep
    step reads of them (the movable items, their segments, the links' far ends and port
    offsets) is taken once here."""

    def __init__(self, items: Ints, links: Ints, mine: Ints, far: Ints, off: np.ndarray
                 ) -> None:
        order = np.argsort(mine, kind="stable")
        links = links[order]
        local = np.searchsorted(items, mine[order])
        count = np.bincount(local, minlength=len(items))
        start = np.cumsum(count) - count
        movable = count > 0
        self.any = bool(movable.any())
        self.far = far[links]  # the neighbour in the fixed layer
        self.off = off[links]  # its port offset there
        count = count[movable]
        # an item's links are lo..hi: with one or two, the median is the mean of those
        self.lo = start[movable]
        self.hi = self.lo + count - 1
        self.many = np.flatnonzero(count > 2)  # the items whose keys need sorting
        self.many_group, self.many_links = ranges(self.lo[self.many], count[self.many])
        self.many_count = count[self.many]
        self.many_start = np.cumsum(self.many_count) - self.many_count
        self.items = items[movable]
        self.seg: Ints = np.empty(0, dtype=np.intp)  # set by BatchOrdering
        self.seg_key: Ints = self.seg  # segment times the batch's size, likewise


class BatchOrdering:
    """Median sweeps and odd-even transpositions over every unit of a ``Flat`` at once."""

    def __init__(self, f: Flat) -> None:
        self.f = f
        n = f.size
        self.at = np.empty(n, dtype=np.intp)
        self._place_all()
        self.up = _Csr(f.dst, n)  # links by target: the links above an item
        self.down = _Csr(f.src, n)
        # every item's links above (group v), then below (group n + v), in one table:
        # per link the neighbour, its port offset and the weight (transpositions weigh
        # both sides of every pair in one step)
        up, down = self.up.perm, self.down.perm
        self.ends = (np.concatenate((f.src[up], f.dst[down])),
                     np.concatenate((f.fa[up], f.fb[down])), np.concatenate((f.w[up], f.w[down])))
        self.link_start = np.concatenate((self.up.start, self.down.start + len(up)))
        self.link_count = np.concatenate((self.up.count, self.down.count))
        layer_of_src = f.layer[f.src]
        self.sweep_down: list[_Median | None] = [None]
        self.sweep_up: list[_Median | None] = []
        for li in range(f.nlayers):
            items = np.flatnonzero(f.layer == li)
            if li:
                into = np.flatnonzero(layer_of_src == li - 1)
                self.sweep_down.append(_Median(items, into, f.dst[into], f.src, f.fa))
            out = np.flatnonzero(layer_of_src == li)
            self.sweep_up.append(_Median(items, out, f.src[out], f.dst, f.fb))
        for m in (*self.sweep_down, *self.sweep_up):
            if m is not None:
                m.seg = f.seg[m.items]
                m.seg_key = m.seg * n
        slot_seg = np.repeat(np.arange(len(f.seg_len)), f.seg_len)
        slot_pos = np.arange(n) - f.seg_start[slot_seg]
        slot_layer = np.zeros(n, dtype=np.intp)
        slot_layer[f.seg_start[f.seg] + f.pos] = f.layer
        has_next = slot_pos + 1 < f.seg_len[slot_seg]
        self.slots = [np.flatnonzero(has_next & (slot_layer % 2 == lp) & (slot_pos % 2 == pp))
                      for lp in (0, 1) for pp in (0, 1)]
        self._pairs()

    def _place_all(self) -> None:
        f = self.f
        self.at[f.seg_start[f.seg] + f.pos] = np.arange(f.size)

    def _pairs(self) -> None:
        """Every pair of links between the same two layers of a unit: they cross when
        their ends are in opposite orders (``ordering._link_pairs``, for all units)."""
        f = self.f
        by_seg = _Csr(f.seg[f.src], len(f.seg_len))
        k = by_seg.count
        # link at index i of a group of k pairs with the k-1-i links after it
        grp, idx = ranges(by_seg.start, k)
        later = (by_seg.start + k)[grp] - idx - 1
        first, second = ranges(idx + 1, later)
        # expanded dag100k's units have ~900k pairs: 32 bits each (indices under 2**31,
        # weights small whole numbers) halves their 29 MB
        pair_i = by_seg.perm[idx[first]]
        pair_j = by_seg.perm[second]
        self.pair_unit = f.unit[f.src[pair_i]].astype(np.int32)
        self.pair_w = (f.w[pair_i] * f.w[pair_j]).astype(np.float32)
        self.pair_i = pair_i.astype(np.int32)
        self.pair_j = pair_j.astype(np.int32)

    def crossings(self) -> np.ndarray:
        """Weighted crossings of each unit."""
        f = self.f
        upper = f.pos[f.src] + f.fa
        lower = f.pos[f.dst] + f.fb
        i, j = self.pair_i, self.pair_j
        cross = (upper[i] - upper[j]) * (lower[i] - lower[j]) < 0
        return np.bincount(self.pair_unit[cross], self.pair_w[cross],
                           minlength=len(f.base) - 1)

    def sweep(self, downward: bool) -> None:
        f = self.f
        pos = f.pos
        seq = range(1, f.nlayers) if downward else range(f.nlayers - 2, -1, -1)
        for li in seq:
            m = self.sweep_down[li] if downward else self.sweep_up[li]
            if m is None or not m.any:
                continue
            keys = pos[m.far] + m.off
            med = (keys[m.lo] + keys[m.hi]) / 2.0
            if len(m.many):
                kb = keys[m.many_links]
                ks = kb[np.lexsort((kb, m.many_group))]
                c = m.many_count
                st = m.many_start
                med[m.many] = (ks[st + (c - 1) // 2] + ks[st + c // 2]) / 2.0
            items = m.items
            cur = pos[items]
            by_key = np.lexsort((cur, med, m.seg))
            new = np.empty_like(cur)
            # the k-th by median takes the k-th free slot (segments run in order: sorting
            # segment-major keys sorts each one's slots in place)
            new[by_key] = np.sort(m.seg_key + cur) - m.seg_key
            pos[items] = new
        self._place_all()

    def _delta(self, a: Ints, b: Ints) -> np.ndarray:
        """Per pair of link groups: crossings with a left of b less those with b left of
        a, every pair of their links at once."""
        other, off, w = self.ends
        pos = self.f.pos
        nb = self.link_count[b]
        many = self.link_count[a] * nb
        pair = np.repeat(np.arange(len(a)), many)
        k = np.arange(len(pair)) - np.repeat(np.cumsum(many) - many, many)
        nbp = nb[pair]
        ia = self.link_start[a][pair] + k // nbp
        ib = self.link_start[b][pair] + k % nbp
        side = np.sign(pos[other[ia]] + off[ia] - (pos[other[ib]] + off[ib]))
        return np.bincount(pair, w[ia] * w[ib] * side, minlength=len(a))

    def transpose(self, rounds: int = TRANSPOSE_ROUNDS) -> None:
        """Odd-even rounds of swaps. After the first, a pair is weighed again only if
        it, or a neighbour of either item, moved since its class was last weighed: the
        others would weigh the same (no swap) as then."""
        pos, at, n = self.f.pos, self.at, self.f.size
        touched = np.zeros(n, dtype=np.intp)  # step an item or a neighbour last moved
        weighed = [0] * len(self.slots)  # step each class was last weighed
        step = 0
        for rnd in range(rounds):
            moved = False
            for c, slots in enumerate(self.slots):
                step += 1
                if rnd and len(slots):
                    slots = slots[np.maximum(touched[at[slots]], touched[at[slots + 1]])
                                  >= weighed[c]]
                weighed[c] = step
                if not len(slots):
                    continue
                a = at[slots]
                b = at[slots + 1]
                both = self._delta(np.concatenate((a, a + n)), np.concatenate((b, b + n)))
                swap = both[:len(a)] + both[len(a):] > 0  # above, then below
                if swap.any():
                    moved = True
                    s, a, b = slots[swap], a[swap], b[swap]
                    at[s] = b
                    at[s + 1] = a
                    pos[a] += 1
                    pos[b] -= 1
                    items = np.concatenate((a, b))
                    touched[items] = step
                    groups = np.concatenate((items, items + n))
                    links = ranges(self.link_start[groups], self.link_count[groups])[1]
                    touched[self.ends[0][links]] = step
            if not moved:
                break


def order_batch(f: Flat, cancel: Callable[[], bool] | None) -> Ints:
    """Each item's position in the best ordering found for its unit."""
    o = BatchOrdering(f)
    best = o.crossings()
    best_pos = f.pos.copy()
    for it in range(ORDER_SWEEPS if best.any() else 0):
        if cancel is not None and cancel():
            raise LayoutCancelled
        o.sweep(downward=it % 2 == 0)
        o.transpose()
        c = o.crossings()
        better = c < best
        if better.any():
            best = np.where(better, c, best)
            take = better[f.unit]
            best_pos[take] = f.pos[take]
        if not best.any():
            break
    return best_pos
