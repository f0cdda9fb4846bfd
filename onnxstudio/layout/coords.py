"""Coordinates of the layered layout: x by isotonic sweeps, y by layer bands, routes.

x: repeated weighted isotonic least-squares sweeps (pool adjacent violators) pull each
item under its neighbours while keeping the layer's order and spacing; long-edge chains
pull hardest, which keeps the main data path straight. Then chains of dummies, and
single-input nodes under a dummy, snap exactly vertical where the gaps allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import add, le, sub

from onnxstudio.layout.ranking import Dag

Point = tuple[float, float]

NODE_SEP = 18.0  # horizontal gap between boxes
DUMMY_SEP = 8.0  # gap next to a long-edge dummy
RANK_SEP = 30.0  # vertical gap between layers
PUSH_MAX = 60.0  # how far a snapping node may push its layer neighbours aside
SNAP_CHAINS = True  # single-input nodes straight under their input
SWEEPS = 4  # down-and-up placement rounds before the final two-sided one


def _pava(target: list[float], weight: list[float]) -> list[float]:
    """Weighted isotonic (non-decreasing) least-squares fit, pool adjacent violators.

    The open block is kept in locals and only closed blocks on the stacks: each pooling
    is one weighted mean (the same sums in the same order as pooling on the stacks)."""
    if len(target) < 2 or all(map(le, target, target[1:])):  # nothing to pool: the same
        return target  # result (most layers of a deep graph hold one item)
    vals: list[float] = []
    wts: list[float] = []
    cnt: list[int] = []
    cv, cw, cc = target[0], weight[0], 1
    for t, w in zip(target[1:], weight[1:], strict=False):
        if cv > t:
            w2 = cw + w
            cv = (cv * cw + t * w) / w2
            cw = w2
            cc += 1
            while vals and vals[-1] > cv:
                pw = wts.pop()
                w2 = pw + cw
                cv = (vals.pop() * pw + cv * cw) / w2
                cw = w2
                cc += cnt.pop()
        else:
            vals.append(cv)
            wts.append(cw)
            cnt.append(cc)
            cv, cw, cc = t, w, 1
    vals.append(cv)
    cnt.append(cc)
    out: list[float] = []
    for v, c in zip(vals, cnt, strict=True):
        out.extend([v] * c)
    return out


@dataclass
class _Placer:
    """x of every item, refined layer by layer (ports: offsets of fixed exits/entries)."""

    g: Dag
    layers: list[list[int]]
    half: list[float]
    oport: list[float]
    iport: list[float]
    x: list[float]
    seps: list[list[float]]  # each layer's packed offsets: the isotonic fit's spacing
    plain: bool = False  # no item has a fixed port (every offset is zero)

    def gap(self, a: int, b: int) -> float:
        return DUMMY_SEP if self.g.is_dummy[a] or self.g.is_dummy[b] else NODE_SEP

    def place(self, li: int, use_up: bool, use_down: bool) -> None:
        layer, s_row = self.layers[li], self.seps[li]
        x, up, down, oport, iport = self.x, self.g.up, self.g.down, self.oport, self.iport
        plain = self.plain
        tgt: list[float] = []
        wgt: list[float] = []
        for i, v in enumerate(layer):
            num = 0.0
            den = 0.0
            if plain:  # no fixed ports: the same sums without adding zero offsets
                if use_up:
                    for w, ew in up[v]:
                        num += ew * x[w]
                        den += ew
                if use_down:
                    for w, ew in down[v]:
                        num += ew * x[w]
                        den += ew
            else:
                if use_up:
                    for w, ew in up[v]:
                        num += ew * (x[w] + oport[w] - iport[v])
                        den += ew
                if use_down:
                    for w, ew in down[v]:
                        num += ew * (x[w] + iport[w] - oport[v])
                        den += ew
            if den > 0:
                tgt.append(num / den - s_row[i])
                wgt.append(den)
            else:
                tgt.append(x[v] - s_row[i])
                wgt.append(0.05)
        fit = _pava(tgt, wgt)
        for i, v in enumerate(layer):
            x[v] = fit[i] + s_row[i]


def _snap(layer: list[int], x: list[float], half: list[float], is_dummy: list[bool],
          up1: list[int], oport: list[float], iport: list[float]) -> None:
    """Long-edge chains exactly vertical where the gaps allow, and single-input nodes
    right under a dummy (merges stay: snapping those drifts whole stacks sideways).
    ``up1``: each item's one neighbour above, or -1 when it has none or several."""
    last = len(layer) - 1
    for i, v in enumerate(layer):
        u = up1[v]
        if u < 0:
            continue
        dv = is_dummy[v]
        if not dv and (is_dummy[u] or not SNAP_CHAINS):
            continue  # real nodes with a single real input sit under it
        tx = x[u] + oport[u] - iport[v]
        if i > 0:
            a = layer[i - 1]
            gap = DUMMY_SEP if is_dummy[a] or dv else NODE_SEP
            short = x[a] + half[a] + gap + half[v] - tx
            if short > 1e-9:
                if short > PUSH_MAX or dv:
                    continue
                for w in layer[:i]:
                    x[w] -= short
        if i < last:
            b = layer[i + 1]
            gap = DUMMY_SEP if is_dummy[b] or dv else NODE_SEP
            short = tx - (x[b] - half[b] - gap - half[v])
            if short > 1e-9:
                if short > PUSH_MAX or dv:
                    continue
                for w in layer[i + 1:]:
                    x[w] += short
        x[v] = tx


def port_offsets(size: int, edges: Sequence[tuple[int, int]], half: list[float],
                  src_off: Sequence[float | None] | None,
                  dst_off: Sequence[float | None] | None) -> tuple[list[float], list[float]]:
    """Mean offset (from the centre) of each box's fixed exits and entries."""
    oport = [0.0] * size
    iport = [0.0] * size
    for offs, into in ((src_off, oport), (dst_off, iport)):
        if offs is None:
            continue
        sums: dict[int, list[float]] = {}
        for (u, v), off in zip(edges, offs, strict=False):
            if off is not None:
                sums.setdefault(u if into is oport else v, []).append(off)
        for i, vals in sums.items():
            into[i] = sum(vals) / len(vals) - half[i]
    return oport, iport


def x_coords(g: Dag, layers: list[list[int]], edges: Sequence[tuple[int, int]],
             src_off: Sequence[float | None] | None,
             dst_off: Sequence[float | None] | None
             ) -> tuple[list[float], list[float], float]:
    """Centre x of every item (left edge at 0), half widths, and the layout's width."""
    half = [w / 2.0 for w in g.width]
    oport, iport = port_offsets(g.size, edges, half, src_off, dst_off)
    placer = _Placer(g, layers, half, oport, iport, [0.0] * g.size, [],
                     not any(oport) and not any(iport))
    x = placer.x
    for layer in layers:
        cur = 0.0
        s_row = [0.0]
        for i, v in enumerate(layer):
            if i:
                a = layer[i - 1]
                cur += half[a] + half[v] + placer.gap(a, v)
                s_row.append(cur)
            x[v] = cur
        placer.seps.append(s_row)
    nranks = g.nranks
    for _ in range(SWEEPS):
        for li in range(1, nranks):
            placer.place(li, True, False)
        for li in range(nranks - 2, -1, -1):
            placer.place(li, False, True)
    for li in range(nranks):
        placer.place(li, True, True)
    up1 = [links[0][0] if len(links) == 1 else -1 for links in g.up]
    return snapped(layers, x, half, g.is_dummy, up1, oport, iport)


def snapped(layers: list[list[int]], x: list[float], half: list[float],
            is_dummy: list[bool], up1: list[int], oport: list[float], iport: list[float]
            ) -> tuple[list[float], list[float], float]:
    """Chains snapped straight (``_snap``), then x shifted so the leftmost box starts at
    0; also for x placed elsewhere (the batched engine, ``batch_place``)."""
    for layer in layers[1:]:
        _snap(layer, x, half, is_dummy, up1, oport, iport)
    xmin = min(map(sub, x, half))
    x = [xi - xmin for xi in x]
    return x, half, max(map(add, x, half))


@dataclass
class Bands:
    """Each layer's top and height (its tallest box), and the layout's height."""

    ytop: list[float]
    band: list[float]
    height: float


def y_bands(g: Dag, heights: Sequence[float]) -> Bands:
    band = [0.0] * g.nranks
    rank = g.rank
    for v in range(g.n):
        h = heights[v]
        if h > band[rank[v]]:
            band[rank[v]] = h
    ytop = [0.0] * g.nranks
    acc = 0.0
    for r in range(g.nranks):
        ytop[r] = acc
        acc += band[r] + RANK_SEP
    return Bands(ytop, band, acc - RANK_SEP)


def _end_points(g: Dag, x: list[float], widths: Sequence[float]
                ) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], float]]:
    """Where each DAG edge leaves and enters its boxes: spread along the side, in the
    order of where the edge goes next, so edges from one box do not cross at once."""
    outs: dict[int, list[tuple[float, tuple[int, int]]]] = {}
    ins: dict[int, list[tuple[float, tuple[int, int]]]] = {}
    for u, v in g.dag:
        chain = g.chains.get((u, v), [])
        outs.setdefault(u, []).append((x[chain[0] if chain else v], (u, v)))
        ins.setdefault(v, []).append((x[chain[-1] if chain else u], (u, v)))
    start: dict[tuple[int, int], float] = {}
    end: dict[tuple[int, int], float] = {}
    for table, side in ((outs, start), (ins, end)):
        for u, lst in table.items():
            lst.sort()
            k = len(lst)
            step = min(10.0, widths[u] * 0.6 / k) if k > 1 else 0.0
            for i, (_, key) in enumerate(lst):
                side[key] = x[u] + (i - (k - 1) / 2.0) * step
    return start, end


def routes(g: Dag, x: list[float], xs: list[float], ys: list[float], bands: Bands,
           widths: Sequence[float], heights: Sequence[float],
           edges: Sequence[tuple[int, int]], src_off: Sequence[float | None] | None,
           dst_off: Sequence[float | None] | None) -> tuple[list[list[Point]], list[bool]]:
    """Each input edge's polyline (through its dummies' bands) and whether it was reversed."""
    start, end = _end_points(g, x, widths)
    ytop, band, rank = bands.ytop, bands.band, g.rank

    def route(u: int, v: int, sx: float | None, ex: float | None) -> list[Point]:
        pts: list[Point] = [(start[(u, v)] if sx is None else xs[u] + sx, ys[u] + heights[u])]
        for d in g.chains.get((u, v), ()):
            r = rank[d]
            pts.append((x[d], ytop[r]))
            if band[r] > 0:
                pts.append((x[d], ytop[r] + band[r]))
        pts.append((end[(u, v)] if ex is None else xs[v] + ex, ys[v]))
        return pts

    out: list[list[Point]] = []
    rev: list[bool] = []
    for e, (u, v) in enumerate(edges):
        if u == v:
            out.append([])
            rev.append(False)
        elif (u, v) in g.back:
            out.append(route(v, u, None, None)[::-1])
            rev.append(True)
        else:
            sx = src_off[e] if src_off is not None else None
            ex = dst_off[e] if dst_off is not None else None
            out.append(route(u, v, sx, ex))
            rev.append(False)
    return out, rev
