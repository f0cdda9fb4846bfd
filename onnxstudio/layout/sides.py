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

from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from onnxstudio.concurrency.gil_runs import dismantle, fromiter_in_runs
from onnxstudio.layout.types import Box, GroupFrame, Layout

Codes = tuple[np.ndarray, np.ndarray, list[str]]  # edges' ends as indexes into box ids
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
    that is unbounded or ill-conditioned). Pairs are made and counted a block of far
    points at a time, so memory stays bounded however wide the fan.
    """

    def __init__(self, far: np.ndarray, others: np.ndarray, cy: float) -> None:
        self.cy = cy
        f = np.asarray(far, dtype=float).reshape(-1, 2)
        o = np.asarray(others, dtype=float).reshape(-1, 4)
        # Far points by the lower end of their band, other segments by their top: a
        # block of far points only meets a prefix of the others.
        self.f = f[np.argsort(np.maximum(f[:, 1], cy), kind="stable")]
        top = np.minimum(o[:, 1], o[:, 3])
        order = np.argsort(top, kind="stable")
        self.o, self.top = o[order], top[order]
        self.width = len(o)  # a pair (far point i, other j) is coded i * width + j

    def crossings(self, xs: list[float]) -> list[int]:
        """Strict crossings of the fan from each (px, cy) with the other segments."""
        n = len(xs)
        order = np.argsort(np.asarray(xs, dtype=float), kind="stable")
        sx = np.asarray(xs, dtype=float)[order]
        count = np.zeros(n, dtype=np.int64)
        f, cy = self.f, self.cy
        # blocks of a few far points: pairwise arrays stay small and prefixes tight
        block = max(1, min(8, 250_000 // max(1, self.width)))
        for k in range(0, len(f), block):
            fx, fy = f[k:k + block, 0:1], f[k:k + block, 1:2]
            reach = int(np.searchsorted(self.top, max(float(fy.max()), cy) + 1.0, "right"))
            live, odd, ac, ad = self._shadows(fx, fy, self.o[:reach])
            at = np.flatnonzero(live & ~odd)
            a, d = ac.ravel()[at], ad.ravel()[at]
            lo, hi = np.minimum(a, d), np.maximum(a, d)
            fi, oi = np.divmod(at, reach)
            code = (fi + k) * self.width + oi
            fi, oi = np.divmod(np.flatnonzero(odd), reach)
            wild = (fi + k) * self.width + oi
            bad = ~(np.isfinite(lo) & np.isfinite(hi))  # never expected: checked directly
            if bad.any():
                wild = np.concatenate([wild, code[bad]])
                code, lo, hi = code[~bad], lo[~bad], hi[~bad]
            count += self._count(sx, code, lo, hi, wild)
        out = np.empty(n, dtype=np.int64)
        out[order] = count
        return [int(c) for c in out]

    def _shadows(self, fx: np.ndarray, fy: np.ndarray,
                 o: np.ndarray) -> tuple[np.ndarray, ...]:
        """For far points (column vectors) against other segments: which pairs can
        cross, which must be checked directly, and the shadow's two ends."""
        cy = self.cy
        cx_, cy_, dx_, dy_ = (o[:, i][None, :] for i in range(4))
        with np.errstate(divide="ignore", invalid="ignore"):
            ex = cx_ + (cy - cy_) / (dy_ - cy_) * (dx_ - cx_)  # where it meets y = cy
            h = cy - fy
            side_f = (dx_ - cx_) * (fy - cy_) - (dy_ - cy_) * (fx - cx_)
            rc, rd = (cy_ - fy) / h, (dy_ - fy) / h  # 0 at f's level, 1 at cy
            ac = fx + (cx_ - fx) / rc
            ad = fx + (dx_ - fx) / rd
        # an end past the moving point's level: the shadow ends where the segment
        # crosses that level
        np.copyto(ac, np.broadcast_to(ex, ac.shape), where=rc > 1.0)
        np.copyto(ad, np.broadcast_to(ex, ad.shape), where=rd > 1.0)
        rlo, rhi = np.minimum(rc, rd), np.maximum(rc, rd)
        live = (side_f != 0) & (rlo < 1.0 + 1e-6) & (rhi > -1e-6)
        # near f's level the shadow is unbounded; a flat segment or fan, or one at the
        # moving point's level, is ill-conditioned
        odd = live & ((rlo < 1e-3) | (rlo > 1.0 - 1e-6) | (np.abs(dy_ - cy_) < 0.5)
                      | (np.abs(h) < 1.0))
        return live, odd, ac, ad

    def _hits(self, code: np.ndarray, px: np.ndarray) -> np.ndarray:
        """The direct check: far point's and (px, cy)'s sides of the other segment differ,
        and the other segment's ends lie on both sides of the fan segment (strictly)."""
        fi, oi = np.divmod(code, self.width)
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

    def _count(self, sx: np.ndarray, code: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               wild: np.ndarray) -> np.ndarray:
        """Crossings at each sorted candidate ``sx`` of the pairs ``code`` (shadows
        ``lo``..``hi``) and of the ``wild`` pairs (checked directly at every candidate)."""
        n = len(sx)
        # Candidates within `slack` of an interval's end are checked directly. Between
        # consecutive cuts (candidates +- slack) it is fixed how many candidates lie
        # surely left of a point and how many lie left of it or near it.
        far_end = max(float(np.abs(lo).max(initial=0.0)), float(np.abs(hi).max(initial=0.0)))
        slack = 0.05 + 1e-6 * far_end  # well above the rounding of any shadow's end
        below, above = sx - slack, sx + slack
        cuts = np.sort(np.concatenate([below, above]))
        at = np.concatenate([[-np.inf], cuts])  # where each gap between cuts begins
        left = np.searchsorted(above, at, "right")
        near = np.searchsorted(below, at, "right")
        ja = np.searchsorted(cuts, lo, "right")
        jb = np.searchsorted(cuts, hi, "right")
        # A pair counts at candidates near[ja] <= k < max(left[jb], near[ja]): tallied
        # per (gap of lo, gap of hi), then spread over the candidates.
        gaps = len(at)
        joint = np.bincount(ja * gaps + jb, minlength=gaps * gaps).astype(float)
        first = np.repeat(near, gaps)
        last = np.maximum(np.tile(left, gaps), first)
        count = np.cumsum(np.bincount(first, joint, minlength=n + 1)
                          - np.bincount(last, joint, minlength=n + 1))[:n].astype(np.int64)
        # only ends inside a candidate's slack window need the direct check
        window = left < near
        some = np.flatnonzero(window[ja] | window[jb])
        code, ja, jb = code[some], ja[some], jb[some]
        outer_a, inner_a = left[ja], near[ja]
        inner_b = np.maximum(left[jb], inner_a)
        outer_b = near[jb]
        zeros = np.zeros(len(wild), dtype=np.int64)
        check = [(code, outer_a, inner_a), (code, inner_b, outer_b), (wild, zeros, zeros + n)]
        for codes, start, stop in check:
            some = np.flatnonzero(stop > start)
            start = start[some]
            span = stop[some] - start
            pair = np.repeat(some, span)
            slot = np.repeat(start - (np.cumsum(span) - span), span) + np.arange(len(pair))
            hit = self._hits(codes[pair], sx[slot])
            count += np.bincount(slot[hit], minlength=n)
        return count


def _geometry(items: list[Box] | list[GroupFrame]) -> np.ndarray:
    """x, y, width, height of each item, one row each, read a column at a time in runs
    (see gil_runs): numpy reading a list of 100k tuples in one call held the GIL 50 ms,
    the longest freeze an expand-all of dag100k caused in the window."""
    n = len(items)
    return np.stack([fromiter_in_runs(map(attrgetter(name), items), float, n)
                     for name in ("x", "y", "width", "height")], axis=1).reshape(-1, 4)


class SideMoves(NamedTuple):
    """What moving the side sources does to a layout, decided before the edges' routes
    exist (build_layout: before they are joined): boxes moved (index, new x,
    their edges), how far right everything then shifts, the refitted width."""

    moves: list[tuple[int, float, list[int]]]
    shift: float
    width: float


def side_moves(boxes: list[Box], groups: list[GroupFrame], sources: list[str],
               targets: list[str], outside: set[str] | None = None,
               codes: Codes | None = None) -> SideMoves | None:
    """The side sources' moves for placed ``boxes`` and ``groups`` and the edges between
    ``sources`` and ``targets`` (no routes needed). None: nothing changes. ``outside``:
    the ids of the boxes and frames outside every frame, when the caller knows them
    (the root's items: expanded dag100k has 100k boxes, all but two inside a frame).
    ``codes``: each edge's ends as indexes into a list of box ids, when the caller has
    them (edge_arrays): each box is then looked up once, not once per edge end."""
    if len(sources) < 8:
        return None
    if outside is None:
        members = {m for g in groups for m in g.members}
        outside = {b.id for b in boxes if b.id not in members} | {
            g.id for g in groups if g.id not in members}
    at = {b.id: i for i, b in enumerate(boxes)}
    n = len(sources)
    if codes is not None:
        s, d, ids = codes
        where = fromiter_in_runs(map(at.get, ids, repeat(-1)), np.int64, len(ids))
        src, dst = where[s], where[d]
    else:
        src = fromiter_in_runs(map(at.get, sources, repeat(-1)), np.int64, n)
        dst = fromiter_in_runs(map(at.get, targets, repeat(-1)), np.int64, n)
    geo = _geometry(boxes)
    both = (src >= 0) & (dst >= 0)
    spans = np.sort(np.abs(geo[dst[both], 1] - geo[src[both], 1]))
    typical = float(spans[len(spans) // 2]) if len(spans) else 0.0
    if typical <= 0:
        return None
    # the boxes outside found by look-up (a few), not by a test of every box (100k)
    free = np.zeros(len(boxes), dtype=bool)
    free[[i for i in map(at.get, outside) if i is not None]] = True
    free = np.concatenate([free, np.array([g.id in outside for g in groups] + [False],
                                          dtype=bool)])  # the last slot: "no box"
    outs: dict[str, list[int]] = {}  # only boxes outside every frame may move
    for i in np.flatnonzero(free[src]).tolist():
        outs.setdefault(sources[i], []).append(i)
    fanouts = sorted(((-len({targets[i] for i in idx}), bid) for bid, idx
                      in outs.items()), key=lambda t: t)
    frames = _geometry(groups)
    free = free[:-1]
    moves: list[tuple[int, float, list[int]]] = []
    for negative, bid in fanouts[:MAX_MOVED]:
        idx = outs[bid]
        box = boxes[at[bid]]
        if -negative < MIN_FANOUT:
            continue
        reach = sorted(boxes[at[targets[i]]].y - box.y for i in idx)
        if reach[len(reach) // 2] < REACH * typical:
            continue
        b = at[bid]
        mine = np.flatnonzero((src == b) | (dst == b))
        ends = np.zeros(len(geo) + 1, dtype=bool)  # the last slot stands for "no box"
        ends[[b, *src[mine], *dst[mine]]] = True
        cx, cy = geo[:, 0] + geo[:, 2] / 2, geo[:, 1] + geo[:, 3] / 2  # Box.center
        rest = ~ends[src] & ~ends[dst] & both
        others = np.stack([cx[src[rest]], cy[src[rest]], cx[dst[rest]], cy[dst[rest]]], axis=1)
        tip = np.where(src[mine] == b, dst[mine], src[mine])
        far = np.stack([cx[tip], cy[tip]], axis=1)
        left, right = _band(box, b, np.concatenate([geo, frames]), free)
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
            moves.append((b, best_x, [int(i) for i in mine]))
            geo[b, 0] = best_x
    xs = np.concatenate([geo[:, 0], frames[:, 0]])
    x0 = float(xs.min()) if len(xs) else 0.0
    shift = -x0 if x0 < 0 else 0.0
    widths = np.concatenate([geo[:, 2], frames[:, 2]])
    width = max(float((xs + shift + widths).max()) if len(xs) else 0.0, 0.0)
    dismantle(at)  # 100k entries: freed at once, 10 ms
    return SideMoves(moves, shift, width)


def move_route_ends(xy: np.ndarray, starts: np.ndarray, sources: list[str],
                    targets: list[str], boxes: list[Box], sides: SideMoves | None) -> None:
    """Re-attach the joined routes (assemble.Routes: rows ``starts[i]:starts[i + 1]`` of
    ``xy`` are edge i's) to the boxes ``side_moves`` moves, then shift them right with
    everything else; before ``apply_side_moves`` moves the boxes."""
    if sides is None:
        return
    for b, x, mine in sides.moves:
        box = boxes[b]
        dx = x - box.x
        for i in mine:
            first, end = int(starts[i]), int(starts[i + 1])
            if end == first:
                continue
            if sources[i] == box.id:
                xy[first, 0] += dx
            if targets[i] == box.id:
                xy[end - 1, 0] += dx
    if sides.shift > 0:
        xy[:, 0] -= -sides.shift


def apply_side_moves(layout: Layout, sides: SideMoves | None) -> None:
    """Move the boxes ``side_moves`` chose (their routes moved by ``move_route_ends``),
    then shift everything right if one went past the left edge, and refit the width."""
    if sides is None:
        return
    for b, x, _mine in sides.moves:
        layout.boxes[b].x = x
    x0 = -sides.shift
    if x0 < 0:
        for box in layout.boxes:
            box.x -= x0
        for g in layout.groups:
            g.x -= x0
    layout.width = sides.width


def _band(box: Box, b: int, rects: np.ndarray, free: np.ndarray) -> tuple[float, float]:
    """Left and right end of everything outside every frame in ``box``'s band of rows
    (row ``b`` of ``rects`` is the box itself)."""
    x, y, w, h = rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3]
    near = (y < box.y + box.height) & (box.y < y + h) & free
    near[b] = False
    if not near.any():
        return box.x, box.x + box.width
    return float(x[near].min()), float((x[near] + w[near]).max())
