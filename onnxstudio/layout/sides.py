"""Move far-reaching side inputs (an attention mask feeding every layer) to the side.

A top-level box whose edges reach far down into the graph (many consumers, layers
apart) draws best beside the column it feeds, not above its middle: its edges then
come in from the side instead of cutting across every layer in between. Candidates
right and left of everything in the box's band are scored by how many straight
centre-to-centre segments its edges would cross; the nearest one within SLACK of the
best wins (the current place if it is good enough). Only boxes outside every group
frame move, so frames stay intact.
"""

from __future__ import annotations

import numpy as np

from onnxstudio.layout.types import Layout

MIN_FANOUT = 3
REACH = 4.0  # edges at least this many times longer (vertically) than the median edge
STEP = 100.0
STEPS = 10
SLACK = 1.15
MAX_MOVED = 8  # only the widest fan-outs are considered, which bounds the cost


class _Fan:
    """Segments from one movable point to fixed far points, scored against fixed others.

    Seen from a far point f, another segment casts a shadow on the line y = cy: the fan
    segment from (px, cy) to f crosses it exactly when px is inside that open interval.
    Each (far point, other segment) pair gets its interval once, so a candidate place is
    counted by comparisons; the orientation tests of the direct check decide only the
    pairs where rounding could matter (a candidate near an interval's end, or a shadow
    that is unbounded or ill-conditioned).
    """

    def __init__(self, far: list[tuple[float, float]], others: np.ndarray, cy: float) -> None:
        self.cy = cy
        f = np.asarray(far, dtype=float).reshape(-1, 2)
        self.f = f
        self.o = o = np.asarray(others, dtype=float).reshape(-1, 4)
        cx_, cy_, dx_, dy_ = (o[:, i][None, :] for i in range(4))
        with np.errstate(divide="ignore", invalid="ignore"):
            ex = cx_ + (cy - cy_) / (dy_ - cy_) * (dx_ - cx_)  # where it meets y = cy
        steep = np.abs(dy_ - cy_) >= 0.5
        block = max(1, 250_000 // max(1, len(o)))  # pairwise arrays stay small
        sure, wild = [], []
        for k in range(0, len(f), block):
            fx, fy = f[k:k + block, 0:1], f[k:k + block, 1:2]
            h = cy - fy
            side_f = (dx_ - cx_) * (fy - cy_) - (dy_ - cy_) * (fx - cx_)
            with np.errstate(divide="ignore", invalid="ignore"):
                rc, rd = (cy_ - fy) / h, (dy_ - fy) / h  # 0 at f's level, 1 at cy
                ac = np.where(rc > 1.0, ex, fx + (cx_ - fx) / rc)
                ad = np.where(rd > 1.0, ex, fx + (dx_ - fx) / rd)
            rlo, rhi = np.minimum(rc, rd), np.maximum(rc, rd)
            live = (side_f != 0) & (rlo < 1.0) & (rhi > 0.0)
            odd = live & ((rlo < 1e-3) | ~steep | (np.abs(h) < 1.0)
                          | ~np.isfinite(ac) | ~np.isfinite(ad))
            fi, oi = np.nonzero(live & ~odd)
            sure.append((fi + k, oi, np.minimum(ac, ad)[fi, oi], np.maximum(ac, ad)[fi, oi]))
            fi, oi = np.nonzero(odd)
            wild.append((fi + k, oi))
        self.sure = [np.concatenate(c) for c in zip(*sure, strict=True)]
        self.wild = [np.concatenate(c) for c in zip(*wild, strict=True)]

    def _hits(self, fi: np.ndarray, oi: np.ndarray, px: np.ndarray) -> np.ndarray:
        """The direct check: far point's and (px, cy)'s sides of the other segment differ,
        and the other segment's ends lie on both sides of the fan segment (strictly)."""
        fx, fy = self.f[fi, 0], self.f[fi, 1]
        o = self.o[oi]
        cx_, cy_, dx_, dy_ = o[:, 0], o[:, 1], o[:, 2], o[:, 3]
        cy = self.cy
        side_f = np.sign((dx_ - cx_) * (fy - cy_) - (dy_ - cy_) * (fx - cx_)).astype(np.int8)
        side_p = np.sign((dx_ - cx_) * (cy - cy_) - (dy_ - cy_) * (px - cx_))
        hit = side_f * side_p.astype(np.int8) < 0
        run, fdy = fx - px, fy - cy
        hit &= (run * (cy_ - cy) - fdy * (cx_ - px)) * (run * (dy_ - cy) - fdy * (dx_ - px)) < 0
        return hit

    def crossings(self, xs: list[float]) -> list[int]:
        """Strict crossings of the fan from each (px, cy) with the other segments."""
        n = len(xs)
        order = np.argsort(np.asarray(xs, dtype=float), kind="stable")
        sx = np.asarray(xs, dtype=float)[order]
        fi, oi, lo, hi = self.sure
        slack_lo = 0.05 + 1e-6 * np.abs(lo)
        slack_hi = 0.05 + 1e-6 * np.abs(hi)
        inner_a = np.searchsorted(sx, lo + slack_lo, "right")
        inner_b = np.maximum(np.searchsorted(sx, hi - slack_hi, "left"), inner_a)
        outer_a = np.searchsorted(sx, lo - slack_lo, "left")
        outer_b = np.searchsorted(sx, hi + slack_hi, "right")
        count = np.cumsum(np.bincount(inner_a, minlength=n + 1)
                          - np.bincount(inner_b, minlength=n + 1))[:n]
        wf, wo = self.wild
        zeros = np.zeros(len(wf), dtype=np.int64)
        check = [(fi, oi, outer_a, inner_a), (fi, oi, inner_b, outer_b),
                 (wf, wo, zeros, zeros + n)]
        for cfi, coi, start, stop in check:
            span = stop - start
            pair = np.repeat(np.arange(len(span)), span)
            slot = np.repeat(start - (np.cumsum(span) - span), span) + np.arange(len(pair))
            hit = self._hits(cfi[pair], coi[pair], sx[slot])
            count += np.bincount(slot[hit], minlength=n)
        out = np.empty(n, dtype=np.int64)
        out[order] = count
        return [int(c) for c in out]


def place_side_sources(layout: Layout) -> None:
    """Shift qualifying top-level boxes sideways in place (edges re-attached)."""
    if len(layout.edges) < 8:
        return
    members = {m for g in layout.groups for m in g.members}
    boxes = {b.id: b for b in layout.boxes}
    spans = sorted(abs(boxes[e.target].y - boxes[e.source].y) for e in layout.edges
                   if e.source in boxes and e.target in boxes)
    typical = spans[len(spans) // 2] if spans else 0.0
    if typical <= 0:
        return
    outs: dict[str, list[int]] = {}
    for i, e in enumerate(layout.edges):
        outs.setdefault(e.source, []).append(i)
    centre = {b.id: b.center for b in layout.boxes}
    fanouts = sorted(((-len({layout.edges[i].target for i in idx}), bid) for bid, idx
                      in outs.items() if bid not in members), key=lambda t: t)
    for negative, bid in fanouts[:MAX_MOVED]:
        idx = outs[bid]
        box = boxes.get(bid)
        if box is None or -negative < MIN_FANOUT:
            continue
        reach = sorted(boxes[layout.edges[i].target].y - box.y for i in idx)
        if reach[len(reach) // 2] < REACH * typical:
            continue
        mine = [i for i, e in enumerate(layout.edges) if bid in (e.source, e.target)]
        mine_set = set(mine)
        ends = {bid}
        ends.update(layout.edges[i].target for i in mine)
        ends.update(layout.edges[i].source for i in mine)
        others = np.array([(*centre[e.source], *centre[e.target])
                           for i, e in enumerate(layout.edges)
                           if i not in mine_set and e.source not in ends
                           and e.target not in ends], dtype=float).reshape(-1, 4)
        far = [centre[layout.edges[i].target if layout.edges[i].source == bid
                      else layout.edges[i].source] for i in mine]


        rects: list[tuple[str, float, float, float, float]] = [
            (o.id, o.x, o.y, o.width, o.height) for o in layout.boxes if o is not box]
        rects += [(g.id, g.x, g.y, g.width, g.height) for g in layout.groups]
        band = [(x, x + w) for oid, x, y, w, h in rects
                if y < box.y + box.height and box.y < y + h and oid not in members]
        right = max((r for _, r in band), default=box.x + box.width)
        left = min((lo for lo, _ in band), default=box.x)
        # nearest candidate within SLACK of the best: most of the gain, least detour
        places = [box.x]
        for k in range(STEPS):
            places += [right + 40 + k * STEP, left - 40 - box.width - k * STEP]
        counts = _Fan(far, others, box.center[1]).crossings(
            [box.center[0]] + [x + box.width / 2 for x in places[1:]])
        scored = [(abs(x - box.x) if k else 0.0, x, c)
                  for k, (x, c) in enumerate(zip(places, counts, strict=True))]
        floor = min(c for _, _, c in scored)
        best_x = min((d, x) for d, x, c in scored if c <= floor * SLACK + 2)[1]
        if scored[0][2] <= floor * SLACK + 2:
            best_x = box.x
        if best_x != box.x:
            dx = best_x - box.x
            box.x = best_x
            centre[bid] = box.center
            for i in mine:
                e = layout.edges[i]
                if e.source == bid and e.points:
                    e.points[0] = (e.points[0][0] + dx, e.points[0][1])
                if e.target == bid and e.points:
                    e.points[-1] = (e.points[-1][0] + dx, e.points[-1][1])
    xs = [b.x for b in layout.boxes] + [g.x for g in layout.groups]
    x0 = min(xs, default=0.0)
    if x0 < 0:
        for b in layout.boxes:
            b.x -= x0
        for g in layout.groups:
            g.x -= x0
        for e in layout.edges:
            e.points = [(px - x0, py) for px, py in e.points]
    layout.width = max([b.x + b.width for b in layout.boxes]
                       + [g.x + g.width for g in layout.groups] + [0.0])
