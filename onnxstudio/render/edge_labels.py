"""Where the shape labels of edges go, decided once per layout, and how they are drawn.

Greedy in edge order: one label per tensor (a fan-out repeats the same shape), halfway
along its edge, not where it would cover a box, a group's title or an earlier label, or
straddle a group's frame (a label belongs inside the frame its edge runs in); when every
halfway spot is taken (an edge entering a group crosses the frame there), further along.

The drawing is cut into square tiles (``TILE``): a tensor's label belongs to the tile
where its first edge's halfway point lies and is placed only inside it (``LABEL_GAP``/2
clear of the tile's sides). Labels of different tiles can then never meet, so the labels
of a few tiles are decided alone, exactly as deciding every tile would decide them: the
area a view shows first is placed in milliseconds (expanded dag100k: 150k edges, 10 s to
place whole), the rest later or as it is scrolled to, and every strip, zoom level and
export places the same labels.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from struct import Struct

import numpy as np

from onnxstudio.layout.types import Box, Layout
from onnxstudio.render import text as tx
from onnxstudio.render.anchors import polyline_anchors
from onnxstudio.render.boxes import NAME_CAPTION_WIDTH
from onnxstudio.render.drawing import Surface
from onnxstudio.render.geometry import label_anchor
from onnxstudio.render.hit_index import GROUP_LABEL_HEIGHT, GraphIndex, Rect
from onnxstudio.render.label_choice import first_free
from onnxstudio.render.label_tiles import (
    UNKNOWN,
    PlacedLabels,
    Placement,
    Tensors,
    tile_key,
    tile_keys,
)
from onnxstudio.render.rect_join import covering, straddling
from onnxstudio.render.theme import Theme

ALONG = (0.25, 0.75, 0.12, 0.88)  # where else along its edge a label may go, in order
ARROW_CLEAR = 5.0  # a node's name above its box starts this far right of an arrow's tip
LABEL_GAP = 8.0  # side by side, two labels keep this apart (4 px read as one long label)
TILE = 2048.0  # the side of a tile; a viewport at a zoom showing labels meets 2-6
CHUNK = 4096  # tensors placed at a time by ``place_all`` (a worker, between paints)
FEW_BENT = 100  # fewer bent routes are walked one by one (a numpy walk's steps cost more)
CAPTION_REACH = 400.0  # how far a node's name above its box reaches past the box
_XY = Struct("<2d")  # a point of a packed route


class EdgeLabels:
    """The placed labels of one layout (tile by tile, on first use) and their painting.
    Safe to place from a worker while the GUI thread paints: each placement is worked
    out unlocked and merged under a lock, tiles already merged being skipped."""

    def __init__(self, layout: Layout, index: GraphIndex) -> None:
        self.layout = layout
        self.index = index
        self._placed: dict[bool, Placement] = {}  # by whether node names are shown
        self._tensors: Tensors | None = None
        self._caption_shifts: dict[str, float] | None = None
        self._by_tile: tuple[np.ndarray, np.ndarray] | None = None  # see by_tile
        self._lock = threading.Lock()

    def paint(self, s: Surface, theme: Theme, rect: Rect | None, related: frozenset[int],
              names: bool = False) -> None:
        placement = self.placed_in(rect, names)
        if rect is None:
            placed = placement.labels
            chosen = np.arange(len(placed.edge))
        else:
            placed = placement.within(tile_keys(rect, TILE))  # a label stays in its tile
            x, y, w, h = rect
            chosen = np.flatnonzero(
                (placed.x1 >= x) & (placed.x0 <= x + w) & (placed.y1 >= y) & (placed.y0 <= y + h)
            )
        columns = (placed.edge, placed.text_x, placed.base, placed.x0, placed.y0, placed.x1,
                   placed.y1)  # as Python numbers in one go: numpy scalars are slow to read
        for i, x, base, x0, y0, x1, y1 in zip(*(c[chosen].tolist() for c in columns),
                                              strict=True):
            self._draw(s, theme, i, x, base, (x0, y0, x1 - x0, y1 - y0), related)

    def _draw(self, s: Surface, t: Theme, i: int, x: float, base: float, box: Rect,
              related: frozenset[int]) -> None:
        e = self.layout.edges[i]
        color = t.hover if i in related else t.edge_label

        def draw() -> None:
            s.rect(*box, t.edge_label_bg, None)
            s.text(x, base, e.label, tx.EDGE_LABEL_FONT, color)

        s.begin_item(f"label{i}", "edge-label", e.value, "")
        if s.keeps_looks:
            # the backdrop is placed from the text (_label_rects): label and colours decide
            s.stamp((id(t), "edge-label", e.label, color), (x, base), draw)
        else:
            draw()
        s.end_item()

    def prepare_area(self, rect: Rect) -> None:
        """The labels of the tiles ``rect`` meets, ahead of its first paint (a layout
        task does it for the area a view will show, off the GUI thread)."""
        self.placed_in(rect)

    def placed(self, names: bool = False) -> PlacedLabels:
        """Every label's spot (see the module docstring), clear of the node names drawn
        above boxes when ``names``."""
        return self.placed_in(None, names).labels

    def place_all(self, names: bool = False,
                  cancelled: Callable[[], bool] = lambda: False) -> None:
        """Place the tiles not placed yet, ``CHUNK`` tensors at a time (an export, or a
        worker: a paint meanwhile places what it shows itself)."""
        placement = self.placement(names)
        keys, order = self.by_tile()
        cut = 0
        while cut < len(order) and not cancelled():
            end = min(cut + CHUNK, len(order))
            while end < len(order) and keys[end] == keys[end - 1]:
                end += 1  # a tile is placed whole
            todo = [k for k in np.unique(keys[cut:end]).tolist() if k not in placement.done]
            if todo:
                chosen = order[cut:end][np.isin(keys[cut:end], todo)]
                self._merge(placement, set(todo), self._place(chosen, names))
            cut = end
        if not cancelled():
            placement.complete = True

    def by_tile(self) -> tuple[np.ndarray, np.ndarray]:
        """Every tensor's home tile, sorted, and the tensors in that order: worked out
        once (``GraphPainter.prepare_rest``, off the GUI thread), after which a tile a
        paint places finds its tensors without a pass over every edge."""
        table = self._by_tile
        if table is None:
            homes = self._homes(np.arange(len(self.tensors().first)))
            order = np.argsort(homes, kind="stable")
            table = self._by_tile = (homes[order], order)
        return table

    def placed_in(self, rect: Rect | None, names: bool = False) -> Placement:
        """The placement with (at least) the tiles ``rect`` meets placed (None: all)."""
        placement = self.placement(names)
        if placement.complete:
            return placement
        if rect is None:
            self.place_all(names)
            return placement
        wanted = set(tile_keys(rect, TILE)) - placement.done
        if not wanted:
            return placement
        table = self._by_tile
        if table is not None:
            keys, order = table
            ask = np.fromiter(wanted, dtype=np.int64, count=len(wanted))
            lo, hi = np.searchsorted(keys, ask, "left"), np.searchsorted(keys, ask, "right")
            tensors = np.concatenate([order[a:b] for a, b in zip(lo.tolist(), hi.tolist(),
                                                                 strict=True)])
        else:  # the tensors whose first edge meets the tiles, homed in them
            x, y, w, h = rect
            x0, y0 = x // TILE * TILE, y // TILE * TILE
            area = (x0, y0, ((x + w) // TILE + 1) * TILE - x0, ((y + h) // TILE + 1) * TILE - y0)
            t = self.tensors()
            edges = self.index.edge_indices_in(area)
            edges = edges[t.tensor[edges] >= 0]
            near = t.tensor[edges[t.first[t.tensor[edges]] == edges]]
            tensors = near[np.isin(self._homes(near), list(wanted))]
        self._merge(placement, wanted, self._place(tensors, names))
        return placement

    def unplaced_near(self, rect: Rect, names: bool = False) -> Rect | None:
        """A tile ``rect`` meets that is not placed yet, the one nearest its centre (the
        canvas places it between paints, so a pan finds its labels ready)."""
        placement = self.placement(names)
        if placement.complete:
            return None
        x, y, w, h = rect
        cx, cy = x + w / 2, y + h / 2
        best: tuple[float, Rect] | None = None
        for c in range(int(x // TILE), int((x + w) // TILE) + 1):
            for r in range(int(y // TILE), int((y + h) // TILE) + 1):
                if tile_key(c, r) in placement.done:
                    continue
                d = abs((c + 0.5) * TILE - cx) + abs((r + 0.5) * TILE - cy)
                if best is None or d < best[0]:
                    best = (d, (c * TILE + 1.0, r * TILE + 1.0, TILE - 2.0, TILE - 2.0))
        return best[1] if best is not None else None

    def placement(self, names: bool = False) -> Placement:
        """The labels of that look placed so far (nothing is placed here)."""
        placement = self._placed.get(names)
        if placement is None:
            with self._lock:
                placement = self._placed.setdefault(names, Placement())
        return placement

    def _merge(self, placement: Placement, tiles: set[int], chosen: PlacedLabels) -> None:
        """Add the labels of ``tiles`` placed by one ``_place`` (those not added meanwhile
        by another thread: a tile's labels are the same whoever places them)."""
        with self._lock:
            new = tiles - placement.done
            if not new:
                return
            if new != tiles:
                chosen = chosen.only(np.isin(chosen.tile, list(new)))
            placement.add(chosen, new)

    def tensors(self) -> Tensors:
        """Which tensor each edge carries, and each tensor's edges (one pass over the
        edges, made by ``GraphPainter.prepare_first`` off the GUI thread)."""
        if self._tensors is None:
            with self._lock:  # one table: tiles' homes are written into it
                if self._tensors is None:
                    self._tensors = Tensors(self.layout)
        return self._tensors

    def _homes(self, tensors: np.ndarray) -> np.ndarray:
        """The home tile of each of ``tensors``: where its first edge's halfway point is."""
        t = self.tensors()
        homes = t.home[tensors]
        unknown = tensors[homes == UNKNOWN]
        if len(unknown):
            first = t.first[unknown]
            mx, my, _, _ = self._anchors(first, self._ends(first), 0.5)
            col = np.floor_divide(mx, TILE).astype(np.int64)
            row = np.floor_divide(my, TILE).astype(np.int64)
            t.home[unknown] = (col << 32) + row + 2**31  # as tile_key
            homes = t.home[tensors]
        return homes

    def _place(self, tensors: np.ndarray, names: bool) -> PlacedLabels:
        """The labels of ``tensors`` (their tiles' every tensor), greedy in edge order:
        halfway first, then, for the tensors left without, further along; with each
        label's home tile."""
        t = self.tensors()
        edges = np.sort(t.edges_of(tensors))
        first, rects = self._choose(edges, self.candidates(edges), names, np.zeros((0, 4)))
        missing = edges[~np.isin(t.tensor[edges], t.tensor[first.edge])]
        later, _ = self._choose(missing, self.candidates(missing, ALONG), names, rects)
        return PlacedLabels.gathered([first, later])

    def _choose(self, edges: np.ndarray, tries: np.ndarray, names: bool, before: np.ndarray
                ) -> tuple[PlacedLabels, np.ndarray]:
        """Give each tensor of ``edges`` the first of its edges' spots (``tries``,
        ``candidates``) that is free: within its home tile, clear of boxes, titles and
        frames (rect_join) and of the labels placed before it, in this call or
        ``before`` (label_choice, for all spots at once); and their backdrops."""
        t = self.tensors()
        per = tries.shape[1]
        flat = tries.reshape(-1, 4)
        at = _label_rects(flat)
        homes = t.home[t.tensor[edges]]
        free = ~self._blocked(at, np.repeat(homes, per), names)
        taken = first_free(at, free, np.repeat(t.tensor[edges], per), before, LABEL_GAP)
        spot, x0, y0 = at[taken], at[taken, 0], at[taken, 1]
        values = np.stack((flat[taken, 0], flat[taken, 1], x0, y0, x0 + spot[:, 2],
                           y0 + spot[:, 3]), axis=1)
        return PlacedLabels(edges[taken // per], values, homes[taken // per]), spot

    def caption_shifts(self) -> dict[str, float]:
        """Per node box whose top an arrow enters where its name would be written above
        it: how far right the name moves to start past the rightmost such arrow (written
        from the box's left edge, names were crossed by the arrows entering narrow boxes).
        Computed once per layout; a left-to-right layout's arrows enter at the side."""
        if self._caption_shifts is None:
            # an arrow's tip read from the end of its packed route, a name measured only
            # for a box an arrow enters at the top: each route unpacked and every box's
            # name measured took 0.9 s of expanded dag100k's first paint with names
            box = self.index.box
            reach: dict[str, float] = {}  # per box entered at its top: past its name
            tips: dict[str, float] = {}
            named: dict[str, Box] = {}
            for e in self.layout.edges:
                b = box(e.target)
                if b is None or b.kind != "node" or not b.subtitle:
                    continue
                route = e.packed
                x, y = (_XY.unpack_from(route, len(route) - 16) if route
                        else self.index.centre_line(e)[-1])
                if abs(y - b.y) > 2.0:
                    continue
                limit = reach.get(b.id)
                if limit is None:
                    limit = reach[b.id] = b.x + caption_width(b) + 2.0 + ARROW_CLEAR
                    named[b.id] = b
                if x <= limit:
                    tips[b.id] = max(x, tips.get(b.id, x))
            self._caption_shifts = {key: max(0.0, x + ARROW_CLEAR - named[key].x)
                                    for key, x in tips.items()}
        return self._caption_shifts

    def _blocked(self, at: np.ndarray, homes: np.ndarray, names: bool) -> np.ndarray:
        """Per spot (rows of ``at``): whether it leaves its home tile (``homes``), covers a box,
        a group's title (group names stay readable) or, when ``names``, a node's name
        above its box, or straddles a group's frame. Only what lies near the spots is
        asked about."""
        if not len(at):
            return np.zeros(0, dtype=bool)
        x0, y0 = at[:, 0], at[:, 1]
        x1, y1 = x0 + at[:, 2], y0 + at[:, 3]
        near = (float(x0.min()), float(y0.min()), float(x1.max() - x0.min()),
                float(y1.max() - y0.min()))
        layout, index = self.layout, self.index
        groups = index.group_indices_in(near).tolist()
        title = [(g.x, g.y, min(g.width, tx.text_width(g.label, tx.GROUP_LABEL_FONT) + 90.0),
                  GROUP_LABEL_HEIGHT) for g in (layout.groups[k] for k in groups)]
        if names:
            shift = self.caption_shifts()
            x, y, w, h = near
            reach = (x - CAPTION_REACH, y, w + 2 * CAPTION_REACH, h + CAPTION_REACH)
            title += [name_caption(b, shift.get(b.id, 0.0))
                      for b in (layout.boxes[k] for k in index.box_indices_in(reach).tolist())
                      if b.kind == "node" and b.subtitle]
        boxes = np.concatenate((index.box_rects[index.box_indices_in(near)],
                                np.array(title, dtype=np.float64).reshape(-1, 4)))
        frames = index.group_rects[np.asarray(groups, dtype=np.int64)]
        col = (homes >> 32).astype(np.float64)
        row = ((homes & 0xFFFFFFFF) - 2**31).astype(np.float64)
        half = LABEL_GAP / 2
        outside = ((x0 < col * TILE + half) | (x1 > (col + 1) * TILE - half)
                   | (y0 < row * TILE) | (y1 > (row + 1) * TILE))
        return outside | covering(at, boxes) | straddling(at, frames)

    def candidates(self, edges: np.ndarray, shares: tuple[float, ...] = (0.5,)
                   ) -> np.ndarray:
        """Places to try for the labels of ``edges``, at each of ``shares`` of the way
        along: beside a vertical run (right, then left), above or below a horizontal
        one. Rows of (x, baseline, width, height), two per share for each edge: shape
        (edges, 2 × shares, 4). Straight edges (most) in numpy, the rest one by one."""
        font = tx.EDGE_LABEL_FONT
        size = font.size
        widths = self._widths(edges)
        out = np.empty((len(edges), 2 * len(shares), 4))
        out[:, :, 2] = widths[:, None]
        out[:, :, 3] = size * (tx.ASCENT + tx.DESCENT)
        ends = self._ends(edges)
        for k, share in enumerate(shares):
            mx, my, dx, dy = self._anchors(edges, ends, share)
            upright = np.abs(dx) < np.abs(dy)
            base = np.where(upright, my + size * 0.35, my - 4.0)
            out[:, 2 * k, 0] = np.where(upright, mx + 5.0, mx - widths / 2)
            out[:, 2 * k, 1] = base
            out[:, 2 * k + 1, 0] = np.where(upright, mx - 5.0 - widths, mx - widths / 2)
            out[:, 2 * k + 1, 1] = np.where(upright, base, my + 4.0 + size)
        return out

    def _widths(self, edges: np.ndarray) -> np.ndarray:
        """How wide each edge's label is (measured once per distinct label)."""
        known: dict[str, float] = {}
        layout_edges = self.layout.edges
        font = tx.EDGE_LABEL_FONT
        return np.fromiter(
            (known.get(label) or known.setdefault(label, tx.text_width(label, font))
             for label in (layout_edges[i].label for i in edges.tolist())),
            dtype=np.float64, count=len(edges))

    def _anchors(self, edges: np.ndarray, ends: tuple[np.ndarray, np.ndarray], share: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """x, y ``share`` of the way along each of ``edges`` and the direction there
        (``label_anchor``'s numbers; ``ends``: ``_ends(edges)``)."""
        points, straight = ends
        (ax, ay), (bx, by) = points[:, 0:2].T, points[:, 2:4].T
        mx, my = ax + (bx - ax) * share, ay + (by - ay) * share
        dx, dy = bx - ax, by - ay  # its sign and ratio are what matter
        bent = np.flatnonzero(~straight)
        if not len(bent):
            return mx, my, dx, dy
        layout_edges = self.layout.edges
        routed = np.fromiter((layout_edges[i].point_count > 0 for i in edges[bent].tolist()),
                             dtype=bool, count=len(bent))
        chosen = bent[routed]
        if len(chosen) >= FEW_BENT:  # all at once, the same numbers as label_anchor's
            mx[chosen], my[chosen], dx[chosen], dy[chosen] = polyline_anchors(
                [layout_edges[i].packed for i in edges[chosen].tolist()], share)
            bent = bent[~routed]
        for j in bent.tolist():  # a few (a tile's), or without a route (centre to centre)
            e = layout_edges[int(edges[j])]
            (mx[j], my[j]), (dx[j], dy[j]) = label_anchor(
                e.points or self.index.centre_line(e), share)
        return mx, my, dx, dy

    def _ends(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per edge: its two ends (ax, ay, bx, by) when its route is one straight segment
        of some length, and whether it is."""
        return self.index.straight_ends(edges)


def caption_width(b: Box) -> float:
    """How wide a node's name written above its box is (boxes.op_box elides it there)."""
    return min(tx.text_width(b.subtitle, tx.SUBTITLE_FONT), max(b.width, NAME_CAPTION_WIDTH))


def name_caption(b: Box, shift: float = 0.0) -> Rect:
    """Where a node's name is written above its box when names are shown (boxes.op_box
    draws it there, the layout reserving no line for it), ``shift`` to the right of the
    box's left edge (``EdgeLabels.caption_shifts``)."""
    font = tx.SUBTITLE_FONT
    height = font.size * (tx.ASCENT + tx.DESCENT)
    return (b.x + shift, b.y - 3.0 - font.size * tx.ASCENT - 1.0, caption_width(b) + 2.0,
            height + 1.0)


def _label_rects(candidates: np.ndarray) -> np.ndarray:
    """The backdrops (x, y, w, h) of labels whose text starts at x on the baseline
    (rows of candidates)."""
    x, base, w, h = candidates.T
    return np.stack((x - 2.0, base - tx.EDGE_LABEL_FONT.size * tx.ASCENT - 1.0, w + 4.0,
                     h + 2.0), axis=1).reshape(-1, 4)
