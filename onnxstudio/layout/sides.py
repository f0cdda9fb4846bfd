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

    Every candidate place re-scores the same fan; what does not depend on the moving
    point (where each far point lies relative to each other segment) is computed once,
    in bounded blocks, so a candidate costs a few array passes instead of four full
    orientation tests.
    """

    def __init__(self, far: list[tuple[float, float]], others: np.ndarray, cy: float) -> None:
        self.cy = cy
        f = np.asarray(far, dtype=float).reshape(-1, 2)
        self.fx, self.fdy = f[:, 0:1], f[:, 1:2] - cy
        block = max(1, 2_000_000 // max(1, len(f)))  # bound the pairwise arrays' memory
        self.blocks = []
        for k in range(0, len(others), block):
            o = others[k:k + block]
            cx_, cy_, dx_, dy_ = (o[:, i][None, :] for i in range(4))
            # which side of each other segment every far point lies on (fixed)
            side_f = np.sign((dx_ - cx_) * (f[:, 1:2] - cy_)
                             - (dy_ - cy_) * (f[:, 0:1] - cx_)).astype(np.int8)
            self.blocks.append((cx_, cy_ - cy, dx_, dy_ - cy, cy_, dy_, side_f))

    def crossings(self, px: float) -> int:
        """Strict crossings of the fan from (px, cy) with the other segments."""
        total = 0
        fx, fdy, cy = self.fx, self.fdy, self.cy
        for cx_, cdy, dx_, ddy, cy_, dy_, side_f in self.blocks:
            side_p = np.sign((dx_ - cx_) * (cy - cy_) - (dy_ - cy_) * (px - cx_))
            hit = side_f * side_p.astype(np.int8) < 0
            run = fx - px
            hit &= (run * cdy - fdy * (cx_ - px)) * (run * ddy - fdy * (dx_ - px)) < 0
            total += int(np.count_nonzero(hit))
        return total


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

        score = _Fan(far, others, box.center[1]).crossings

        rects: list[tuple[str, float, float, float, float]] = [
            (o.id, o.x, o.y, o.width, o.height) for o in layout.boxes if o is not box]
        rects += [(g.id, g.x, g.y, g.width, g.height) for g in layout.groups]
        band = [(x, x + w) for oid, x, y, w, h in rects
                if y < box.y + box.height and box.y < y + h and oid not in members]
        right = max((r for _, r in band), default=box.x + box.width)
        left = min((lo for lo, _ in band), default=box.x)
        # nearest candidate within SLACK of the best: most of the gain, least detour
        scored = [(0.0, box.x, score(box.center[0]))]
        for k in range(STEPS):
            for x in (right + 40 + k * STEP, left - 40 - box.width - k * STEP):
                scored.append((abs(x - box.x), x, score(x + box.width / 2)))
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
