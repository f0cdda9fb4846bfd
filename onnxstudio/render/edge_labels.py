"""Where the shape labels of edges go, decided once per layout, and how they are drawn.

Greedy in edge order: one label per tensor (a fan-out repeats the same shape), halfway
along its edge, not where it would cover a box, a group's title or an earlier label, or
straddle a group's frame (a label belongs inside the frame its edge runs in); when every
halfway spot is taken (an edge entering a group crosses the frame there), further along.
Deciding globally, not per paint, keeps labels identical across scrolled strips, zoom
levels and exports.
"""

from __future__ import annotations

import numpy as np

from onnxstudio.layout.types import Box, Layout
from onnxstudio.render import text as tx
from onnxstudio.render.boxes import NAME_CAPTION_WIDTH
from onnxstudio.render.drawing import Surface
from onnxstudio.render.geometry import label_anchor
from onnxstudio.render.hit_index import GROUP_LABEL_HEIGHT, GraphIndex, Rect
from onnxstudio.render.rect_join import covering, straddling
from onnxstudio.render.theme import Theme

LABEL_REACH = 300.0  # how far a label may stick out of its edge's bounding box
MAX_LABEL_COLLISION_EDGES = 20_000  # beyond: each label at its first spot, unchecked
ALONG = (0.25, 0.75, 0.12, 0.88)  # where else along its edge a label may go, in order
ARROW_CLEAR = 5.0  # a node's name above its box starts this far right of an arrow's tip
LABEL_GAP = 8.0  # side by side, two labels keep this apart (4 px read as one long label)

Candidate = tuple[float, float, float, float]  # x, baseline, width, height
Row = tuple[int, float, float, float, float, float, float]  # edge, x, baseline, x0, y0, x1, y1


class EdgeLabels:
    """The placed labels of one layout (computed on first use) and their painting."""

    def __init__(self, layout: Layout, index: GraphIndex) -> None:
        self.layout = layout
        self.index = index
        self._placed: dict[bool, _PlacedLabels] = {}  # by whether node names are shown
        self._first_of_tensor: np.ndarray | None = None  # per edge: shows its tensor's label
        self._spots: dict[int, Candidate] = {}  # huge layouts: labels' spots found so far
        self._caption_shifts: dict[str, float] | None = None

    @property
    def checked(self) -> bool:
        return len(self.layout.edges) <= MAX_LABEL_COLLISION_EDGES

    def paint(self, s: Surface, theme: Theme, rect: Rect | None, related: frozenset[int],
              names: bool = False) -> None:
        if not self.checked:
            self._paint_unchecked(s, theme, rect, related)
            return
        placed = self.placed(names)
        if rect is None:
            chosen = np.arange(len(placed.edge))
        else:
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
            # the backdrop is placed from the text (_label_rect): label and colours decide
            s.stamp((id(t), "edge-label", e.label, color), (x, base), draw)
        else:
            draw()
        s.end_item()

    def prepare(self) -> None:
        """The once-per-layout work, for a worker to do before the first paint: where
        every label goes, or for huge layouts which edge carries its tensor's label
        (a pass over 150k edges froze the first paint of expanded dag100k for 0.2 s)."""
        if self.checked:
            self.placed()
        else:
            self._first_labels()

    def _first_labels(self) -> np.ndarray:
        """Each tensor's first edge: the one that shows its label."""
        if self._first_of_tensor is None:
            first: dict[tuple[str, str], int] = {}
            for i, e in enumerate(self.layout.edges):
                first.setdefault((e.source, e.value), i)
            # a mask, not a set of indices: 6.7 MB less on expanded dag100k
            mask = np.zeros(len(self.layout.edges), dtype=bool)
            mask[np.fromiter(first.values(), dtype=np.int64, count=len(first))] = True
            self._first_of_tensor = mask
        return self._first_of_tensor

    def prepare_area(self, rect: Rect) -> None:
        """The spots of the labels shown in ``rect`` (huge layouts), ahead of its paint."""
        if not self.checked:
            self._unchecked_spots(rect)

    def _unchecked_spots(self, rect: Rect | None) -> list[tuple[int, Candidate]]:
        """The labels a huge layout shows in ``rect``: each tensor's first edge, at its
        first spot (the same in every strip); kept, so the next paint only looks up."""
        first_of_tensor = self._first_labels()
        edges, spots = self.layout.edges, self._spots
        out = []
        for i in self.index.edge_indices_in(rect, margin=LABEL_REACH).tolist():
            spot = spots.get(i)
            if spot is None:
                if not edges[i].label or not first_of_tensor[i]:
                    continue
                spot = spots[i] = self.candidates(i)[0]
            out.append((i, spot))
        return out

    def _paint_unchecked(self, s: Surface, t: Theme, rect: Rect | None,
                         related: frozenset[int]) -> None:
        """Huge layouts: deciding every label up front would stall the first zoom-in,
        so each visible label goes to its first spot (still the same in every strip)."""
        for i, (x, base, w, h) in self._unchecked_spots(rect):
            self._draw(s, t, i, x, base, _label_rect(x, base, w, h), related)

    def placed(self, names: bool = False) -> _PlacedLabels:
        """Every label's spot, decided once (see the module docstring), clear of the node
        names drawn above boxes when ``names``. Whether a spot covers a box or a group's
        title or straddles a frame does not depend on the order, so it is answered for
        every spot at once (rect_join); only the labels placed before are asked spot by
        spot."""
        done = self._placed.get(names)
        if done is not None:
            return done
        edges = self.layout.edges
        labelled = [i for i, e in enumerate(edges) if e.label]
        tries = [self.candidates(i) for i in labelled]
        spots = [_label_rect(*c) for cs in tries for c in cs]
        check = self.checked
        blocked = self._blocked(spots, names).tolist() if check else [False] * len(spots)
        placed = _RectGrid()
        hits = placed.hits
        shown: set[tuple[str, str]] = set()
        rows: list[tuple[int, float, float, float, float, float, float]] = []
        k = 0
        for i, cs in zip(labelled, tries, strict=True):
            first, k = k, k + len(cs)
            e = edges[i]
            key = (e.source, e.value)
            if key in shown:
                continue
            for j, (x, base, _w, _h) in enumerate(cs, first):
                rect = spots[j]
                if blocked[j] or (check and hits(_spaced(rect))):
                    continue
                placed.add(rect)
                shown.add(key)
                rx, ry, rw, rh = rect
                rows.append((i, x, base, rx, ry, rx + rw, ry + rh))
                break
        if check:
            rows += self._elsewhere(labelled, shown, placed, names)
        done = self._placed[names] = _PlacedLabels(rows)
        return done

    def _elsewhere(self, labelled: list[int], shown: set[tuple[str, str]],
                   placed: _RectGrid, names: bool) -> list[Row]:
        """Spots further along for tensors whose halfway spots were all taken: an edge
        entering a group crosses its frame halfway, so its label straddled the frame and
        was dropped. Asked only for those edges, after every halfway label, their spots
        checked against boxes and frames in one go as the halfway ones are."""
        edges = self.layout.edges
        missing = [i for i in labelled if (edges[i].source, edges[i].value) not in shown]
        tries = [[c for share in ALONG for c in self.candidates(i, share)] for i in missing]
        spots = [_label_rect(*c) for cs in tries for c in cs]
        blocked = self._blocked(spots, names).tolist()
        rows: list[Row] = []
        k = 0
        for i, cs in zip(missing, tries, strict=True):
            first, k = k, k + len(cs)
            key = (edges[i].source, edges[i].value)
            if key in shown:
                continue
            for j, (x, base, _w, _h) in enumerate(cs, first):
                rect = spots[j]
                if blocked[j] or placed.hits(_spaced(rect)):
                    continue
                placed.add(rect)
                shown.add(key)
                rx, ry, rw, rh = rect
                rows.append((i, x, base, rx, ry, rx + rw, ry + rh))
                break
        return rows

    def caption_shifts(self) -> dict[str, float]:
        """Per node box whose top an arrow enters where its name would be written above
        it: how far right the name moves to start past the rightmost such arrow (written
        from the box's left edge, names were crossed by the arrows entering narrow boxes).
        Computed once per layout; a left-to-right layout's arrows enter at the side."""
        if self._caption_shifts is None:
            named = {b.id: b for b in self.layout.boxes if b.kind == "node" and b.subtitle}
            tips: dict[str, float] = {}
            for e in self.layout.edges:
                b = named.get(e.target)
                if b is None:
                    continue
                x, y = (e.points or self.index.centre_line(e))[-1]
                if abs(y - b.y) <= 2.0 and x <= b.x + caption_width(b) + 2.0 + ARROW_CLEAR:
                    tips[b.id] = max(x, tips.get(b.id, x))
            self._caption_shifts = {key: max(0.0, x + ARROW_CLEAR - named[key].x)
                                    for key, x in tips.items()}
        return self._caption_shifts

    def _blocked(self, spots: list[Rect], names: bool) -> np.ndarray:
        """Per spot: whether it covers a box, a group's title (group names stay
        readable) or, when ``names``, a node's name above its box, or straddles a group's
        frame."""
        if not spots:
            return np.zeros(0, dtype=bool)
        layout = self.layout
        title = [(g.x, g.y, min(g.width, tx.text_width(g.label, tx.GROUP_LABEL_FONT) + 90.0),
                  GROUP_LABEL_HEIGHT) for g in layout.groups]
        if names:
            shift = self.caption_shifts()
            title += [name_caption(b, shift.get(b.id, 0.0)) for b in layout.boxes
                      if b.kind == "node" and b.subtitle]
        boxes = np.array([(b.x, b.y, b.width, b.height) for b in layout.boxes] + title,
                         dtype=np.float64).reshape(-1, 4)
        frames = np.array([(g.x, g.y, g.width, g.height) for g in layout.groups],
                          dtype=np.float64).reshape(-1, 4)
        at = np.array(spots, dtype=np.float64).reshape(-1, 4)
        return covering(at, boxes) | straddling(at, frames)

    def candidates(self, i: int, share: float = 0.5) -> list[Candidate]:
        """Places to try for edge ``i``'s label ``share`` of the way along it: beside a
        vertical run (right, then left), above or below a horizontal one."""
        e = self.layout.edges[i]
        font = tx.EDGE_LABEL_FONT
        pts = e.points or self.index.centre_line(e)
        (mx, my), (dx, dy) = label_anchor(pts, share)
        w = tx.text_width(e.label, font)
        h = font.size * (tx.ASCENT + tx.DESCENT)
        if abs(dx) < abs(dy):
            base = my + font.size * 0.35
            return [(mx + 5.0, base, w, h), (mx - 5.0 - w, base, w, h)]
        return [(mx - w / 2, my - 4.0, w, h), (mx - w / 2, my + 4.0 + font.size, w, h)]


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


def _spaced(rect: Rect) -> Rect:
    """``rect`` with ``LABEL_GAP`` added at each side: where no earlier label may be."""
    x, y, w, h = rect
    return (x - LABEL_GAP, y, w + 2 * LABEL_GAP, h)


def _label_rect(x: float, base: float, w: float, h: float) -> Rect:
    """The backdrop of a label whose text starts at ``x`` on baseline ``base``."""
    return (x - 2.0, base - tx.EDGE_LABEL_FONT.size * tx.ASCENT - 1.0, w + 4.0, h + 2.0)


class _PlacedLabels:
    """Decided label positions as flat arrays, for culling with one numpy mask."""

    def __init__(self, rows: list[tuple[int, float, float, float, float, float, float]]) -> None:
        a = np.array(rows, dtype=np.float64).reshape(-1, 7)
        self.edge = a[:, 0].astype(np.int64)
        self.text_x, self.base = a[:, 1], a[:, 2]
        self.x0, self.y0, self.x1, self.y1 = a[:, 3], a[:, 4], a[:, 5], a[:, 6]


class _RectGrid:
    """The labels placed so far, bucketed in a coarse grid: fast "does this spot overlap
    one". A query walks the cells the spot covers and stops at the first answer."""

    CELL = 128.0  # a label spans 1-2 cells

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def add(self, r: Rect) -> None:
        """File ``r`` under every cell it covers."""
        x, y, w, h = r
        c, cells = self.CELL, self.cells
        for i in range(int(x // c), int((x + w) // c) + 1):
            for j in range(int(y // c), int((y + h) // c) + 1):
                cell = cells.get((i, j))
                if cell is None:
                    cells[(i, j)] = [r]
                else:
                    cell.append(r)

    def hits(self, r: Rect) -> bool:
        """Whether ``r`` overlaps a rectangle filed under the cells it covers."""
        x, y, w, h = r
        x1, y1 = x + w, y + h
        c, cells = self.CELL, self.cells
        for i in range(int(x // c), int(x1 // c) + 1):
            for j in range(int(y // c), int(y1 // c) + 1):
                for ox, oy, ow, oh in cells.get((i, j), ()):
                    if x < ox + ow and ox < x1 and y < oy + oh and oy < y1:
                        return True
        return False
