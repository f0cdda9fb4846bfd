"""GraphPainter: draws a Layout onto any Surface, with level of detail and culling.

The one place that decides how the graph looks. The canvas calls it for the exposed
area at the current zoom; exporters call it for the whole drawing at zoom 1, so the
file matches the screen. Only items meeting the visible rectangle are drawn (found with
:class:`~onnxstudio.render.hit_index.GraphIndex`), and below a zoom threshold text is
dropped and boxes/edges are batched, which keeps 100k-node graphs fluid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from onnxstudio.layout import labels
from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout
from onnxstudio.render import text as tx
from onnxstudio.render.drawing import Cubic, Font, Point, Stroke, Surface
from onnxstudio.render.geometry import (
    ARROW_LENGTH,
    arrowhead,
    end_direction,
    label_anchor,
    smooth_curve,
    trim_end,
)
from onnxstudio.render.hit_index import GROUP_LABEL_HEIGHT, GraphIndex, Rect
from onnxstudio.render.overlay import Overlay, text_on
from onnxstudio.render.theme import LIGHT, NodeStyle, Theme

# Box anatomy, in layout units; taken from layout/labels.py, which sized the boxes:
# height = 2*PAD_Y + TITLE_LINE_H + lines * DETAIL_LINE_H.
RADIUS = 4.0
HEADER_HEIGHT = labels.PAD_Y + labels.TITLE_LINE_H
SUBTITLE_HEIGHT = labels.DETAIL_LINE_H  # one detail line
DETAIL_LINE = labels.DETAIL_LINE_H
BODY_PAD_TOP = labels.PAD_Y / 2
PAD_X = labels.PAD_X
TEXT_INSET = 4.0  # text may use the padding before it is elided (widths are estimates)
MARKER_SIZE = 9.0  # the +/− square of expandable boxes and groups

# Level of detail: the smallest on-screen size (pixels) at which text is still drawn.
MIN_TITLE_PX = 5.0
MIN_DETAIL_PX = 5.5
MIN_EDGE_LABEL_PX = 6.5
COARSE_SCALE = 0.22  # below: plain batched rectangles and straight edges
LABEL_REACH = 300.0  # how far a label may stick out of its edge's bounding box
MAX_LABEL_COLLISION_EDGES = 20_000  # beyond: each label at its first spot, unchecked
BADGE_FONT = Font(9.0, bold=True)
BADGE_FILL = "#2b2b2b"
BADGE_TEXT = "#ffffff"


@dataclass
class PaintState:
    """What the viewer adds on top of the layout: selection, hover, flash, options."""

    selected: frozenset[str] = frozenset()
    hovered: str | None = None
    related_boxes: frozenset[str] = frozenset()  # neighbours of the hovered box
    related_edges: frozenset[int] = frozenset()  # its incoming/outgoing edges
    selected_edges: frozenset[int] = frozenset()  # edges of the selected boxes
    flash: str | None = None  # briefly ringed after centerOn
    highlighted: frozenset[str] = frozenset()  # search matches
    show_names: bool = False
    show_edge_labels: bool = True
    expanded_marker: bool = True
    overlay: Overlay | None = None  # profile heatmap or divergence colours, with badges
    extra: dict[str, object] = field(default_factory=dict)


def lod(scale: float) -> tuple[bool, bool, bool, bool]:
    """(coarse, titles, details, edge labels) to draw at ``scale``."""
    return (
        scale < COARSE_SCALE,
        tx.TITLE_FONT.size * scale >= MIN_TITLE_PX,
        tx.DETAIL_FONT.size * scale >= MIN_DETAIL_PX,
        tx.EDGE_LABEL_FONT.size * scale >= MIN_EDGE_LABEL_PX,
    )


class GraphPainter:
    """Paints one Layout with one Theme; create a new one when the layout changes."""

    def __init__(self, layout: Layout, theme: Theme = LIGHT, index: GraphIndex | None = None):
        self.layout = layout
        self.theme = theme
        self.index = index or GraphIndex(layout)
        self._curves: dict[int, tuple[Point, list[Cubic]]] = {}
        self._labels: _PlacedLabels | None = None
        self._first_of_tensor: set[int] | None = None
        self.horizontal = layout.direction == "LR"

    # -- public -------------------------------------------------------------------------

    def prepare(self) -> GraphPainter:
        """Do the once-per-layout work (edge-label placement: 150 ms on BERT-96) now.

        Call it where the layout is built, off the GUI thread, so the first paint of a
        big graph does not freeze the window.
        """
        if len(self.layout.edges) <= MAX_LABEL_COLLISION_EDGES:
            self._label_layout()
        return self

    def bounds(self, margin: float = 0.0) -> Rect:
        return (-margin, -margin, self.layout.width + 2 * margin, self.layout.height + 2 * margin)

    def paint_background(self, surface: Surface, rect: Rect) -> None:
        x, y, w, h = rect
        surface.rect(x, y, w, h, self.theme.canvas, None)

    def paint(
        self,
        surface: Surface,
        visible_rect: Rect | None = None,
        scale: float = 1.0,
        state: PaintState | None = None,
    ) -> None:
        """Draw groups, then edges, then boxes that meet ``visible_rect`` (all if None)."""
        state = state or PaintState()
        coarse, titles, details, edge_labels = lod(scale)
        idx = self.index
        groups = idx.group_indices_in(visible_rect)
        edges = idx.edge_indices_in(visible_rect, margin=60.0)
        boxes = idx.box_indices_in(visible_rect)
        for gi in groups:
            self._group(surface, self.layout.groups[int(gi)], scale, titles, coarse)
        if coarse:
            self._coarse_edges(surface, edges, scale, state)
            self._coarse_boxes(surface, boxes, state)
            return
        related = state.related_edges
        chosen = state.selected_edges - related
        n = len(self.layout.edges)
        for ei in edges:
            if int(ei) not in related and int(ei) not in chosen:
                self._edge(surface, int(ei), scale, None)
        for ei in sorted(chosen):  # drawn over the rest, so a selection can be traced
            if 0 <= ei < n:
                self._edge(surface, ei, scale, self.theme.selection)
        for ei in sorted(related):
            if 0 <= ei < n:
                self._edge(surface, ei, scale, self.theme.hover)
        if edge_labels and state.show_edge_labels:
            self._edge_labels(surface, visible_rect, related)
        for bi in boxes:
            self._box(surface, self.layout.boxes[int(bi)], state, titles, details)

    def curve(self, edge_index: int) -> tuple[Point, list[Cubic]]:
        """The smooth route of an edge (cached)."""
        hit = self._curves.get(edge_index)
        if hit is None:
            e = self.layout.edges[edge_index]
            pts = e.points or self._centre_line(e)
            hit = smooth_curve(pts)
            self._curves[edge_index] = hit
        return hit

    # -- groups -------------------------------------------------------------------------

    def _group(self, s: Surface, g: GroupFrame, scale: float, titles: bool, coarse: bool) -> None:
        t = self.theme
        s.begin_item(g.id, "group", g.label, "")
        stroke = Stroke(t.group_border, 1.0 if not coarse else max(1.0, 0.8 / scale))
        if coarse:
            s.rect(g.x, g.y, g.width, g.height, t.group_fill(g.depth), stroke)
        else:
            s.rounded_rect(g.x, g.y, g.width, g.height, 6.0, t.group_fill(g.depth), stroke)
        if titles:
            self._group_label(s, g)
        s.end_item()

    def _group_label(self, s: Surface, g: GroupFrame) -> None:
        t = self.theme
        base = g.y + GROUP_LABEL_HEIGHT / 2 + 4.0
        x = g.x + PAD_X
        self._marker(s, x, g.y + (GROUP_LABEL_HEIGHT - MARKER_SIZE) / 2, False, t.group_label)
        x += MARKER_SIZE + 5.0
        count = f"{g.node_count} node{'s' if g.node_count != 1 else ''}"
        avail = g.x + g.width - PAD_X - x
        count_w = tx.text_width(count, tx.GROUP_COUNT_FONT) + 8.0
        label_w = tx.text_width(g.label, tx.GROUP_LABEL_FONT)
        # The name matters more than the count: drop the count before eliding the name.
        with_count = label_w + count_w <= avail
        label = g.label if with_count else tx.elide(g.label, tx.GROUP_LABEL_FONT, avail)
        if label:
            s.text(x, base, label, tx.GROUP_LABEL_FONT, t.group_label)
        if with_count:
            s.text(x + label_w + 8.0, base, count, tx.GROUP_COUNT_FONT, t.group_count)

    def _marker(self, s: Surface, x: float, y: float, plus: bool, color: str) -> None:
        """A small boxed + (collapsed, double-click expands) or − (expanded)."""
        m = MARKER_SIZE
        s.rounded_rect(x, y, m, m, 1.5, None, Stroke(color, 1.0))
        cy = y + m / 2
        cx = x + m / 2
        s.path(
            (x + 2.0, cy),
            [((x + 2.0, cy), (x + m - 2.0, cy), (x + m - 2.0, cy))],
            Stroke(color, 1.2),
        )
        if plus:
            s.path(
                (cx, y + 2.0),
                [((cx, y + 2.0), (cx, y + m - 2.0), (cx, y + m - 2.0))],
                Stroke(color, 1.2),
            )

    # -- edges --------------------------------------------------------------------------

    def _centre_line(self, e: Edge) -> list[Point]:
        a, b = self.index.box(e.source), self.index.box(e.target)
        return [p.center for p in (a, b) if p is not None] or [(0.0, 0.0)]

    def _edge(self, s: Surface, i: int, scale: float, color: str | None) -> None:
        t = self.theme
        e = self.layout.edges[i]
        start, segs = self.curve(i)
        if not segs:
            return
        col = color or (t.back_edge if e.back else t.edge)
        width = 2.0 if color else 1.2
        width = max(width, 0.9 / scale)
        stroke = Stroke(col, width, (4.0, 3.0) if e.back else None)
        s.begin_item(f"edge{i}", "edge", e.value, "")
        direction = end_direction(start, segs)
        s.path(start, trim_end(start, segs, ARROW_LENGTH - 1.0), stroke)
        s.polygon(arrowhead(segs[-1][2], direction), col)
        s.end_item()

    def _edge_labels(self, s: Surface, rect: Rect | None, related: frozenset[int]) -> None:
        t = self.theme
        font = tx.EDGE_LABEL_FONT
        if len(self.layout.edges) > MAX_LABEL_COLLISION_EDGES:
            self._edge_labels_unchecked(s, rect, related)
            return
        placed = self._label_layout()
        if rect is None:
            chosen = np.arange(len(placed.edge))
        else:
            x, y, w, h = rect
            chosen = np.flatnonzero(
                (placed.x1 >= x) & (placed.x0 <= x + w) & (placed.y1 >= y) & (placed.y0 <= y + h)
            )
        for k in chosen:
            i = int(placed.edge[k])
            e = self.layout.edges[i]
            lx, base = float(placed.text_x[k]), float(placed.base[k])
            x0, y0 = float(placed.x0[k]), float(placed.y0[k])
            colour = t.hover if i in related else t.edge_label
            s.begin_item(f"label{i}", "edge-label", e.value, "")
            s.rect(
                x0, y0, float(placed.x1[k]) - x0, float(placed.y1[k]) - y0, t.edge_label_bg, None
            )
            s.text(lx, base, e.label, font, colour)
            s.end_item()

    def _edge_labels_unchecked(
        self, s: Surface, rect: Rect | None, related: frozenset[int]
    ) -> None:
        """Huge layouts: deciding every label up front would stall the first zoom-in,
        so each visible label goes to its first spot (still the same in every strip)."""
        t = self.theme
        font = tx.EDGE_LABEL_FONT
        if self._first_of_tensor is None:
            first: dict[tuple[str, str], int] = {}
            for i, e in enumerate(self.layout.edges):
                first.setdefault((e.source, e.value), i)
            self._first_of_tensor = set(first.values())
        for ei in self.index.edge_indices_in(rect, margin=LABEL_REACH):
            i = int(ei)
            e = self.layout.edges[i]
            if not e.label or i not in self._first_of_tensor:
                continue
            x, base, w, h = self._label_candidates(i)[0]
            colour = t.hover if i in related else t.edge_label
            s.begin_item(f"label{i}", "edge-label", e.value, "")
            s.rect(
                x - 2.0, base - font.size * tx.ASCENT - 1.0, w + 4.0, h + 2.0, t.edge_label_bg, None
            )
            s.text(x, base, e.label, font, colour)
            s.end_item()

    def _label_layout(self) -> _PlacedLabels:
        """Where every shape label goes, decided once for the whole layout.

        Greedy in edge order: one label per tensor (a fan-out repeats the same shape),
        none where it would cover a box or an earlier label. Deciding globally, not per
        paint, keeps labels identical across scrolled strips, zoom levels and exports.
        """
        if self._labels is not None:
            return self._labels
        font = tx.EDGE_LABEL_FONT
        boxes = _RectGrid()
        for b in self.layout.boxes:
            boxes.add((b.x, b.y, b.width, b.height))
        for g in self.layout.groups:  # keep group names readable too
            text = tx.text_width(g.label, tx.GROUP_LABEL_FONT) + 90.0
            boxes.add((g.x, g.y, min(g.width, text), GROUP_LABEL_HEIGHT))
        placed = _RectGrid()
        shown: set[tuple[str, str]] = set()
        rows: list[tuple[int, float, float, float, float, float, float]] = []
        check = len(self.layout.edges) <= MAX_LABEL_COLLISION_EDGES
        for i, e in enumerate(self.layout.edges):
            key = (e.source, e.value)
            if not e.label or key in shown:
                continue
            for x, base, w, h in self._label_candidates(i):
                rect = (x - 2.0, base - font.size * tx.ASCENT - 1.0, w + 4.0, h + 2.0)
                if check and (placed.hits(rect) or boxes.hits(rect)):
                    continue
                placed.add(rect)
                shown.add(key)
                rx, ry, rw, rh = rect
                rows.append((i, x, base, rx, ry, rx + rw, ry + rh))
                break
        self._labels = _PlacedLabels(rows)
        return self._labels

    def _label_candidates(self, i: int) -> list[tuple[float, float, float, float]]:
        """Places to try for edge ``i``'s label: (x, baseline, width, height)."""
        e = self.layout.edges[i]
        font = tx.EDGE_LABEL_FONT
        pts = e.points or self._centre_line(e)
        (mx, my), (dx, dy) = label_anchor(pts)
        w = tx.text_width(e.label, font)
        h = font.size * (tx.ASCENT + tx.DESCENT)
        if abs(dx) < abs(dy):  # running vertically: right of it, else left
            base = my + font.size * 0.35
            return [(mx + 5.0, base, w, h), (mx - 5.0 - w, base, w, h)]
        # running horizontally: above, else below
        return [(mx - w / 2, my - 4.0, w, h), (mx - w / 2, my + 4.0 + font.size, w, h)]

    def _coarse_edges(self, s: Surface, edges: np.ndarray, scale: float, state: PaintState) -> None:
        t = self.theme
        lines: list[list[Point]] = []
        for ei in edges:
            e = self.layout.edges[int(ei)]
            lines.append(list(e.points or self._centre_line(e)))
        if lines:
            s.polylines(lines, Stroke(t.edge, max(1.0, 0.8 / scale)))

    # -- boxes --------------------------------------------------------------------------

    def _coarse_boxes(self, s: Surface, boxes: np.ndarray, state: PaintState) -> None:
        by_fill: dict[str, list[tuple[float, float, float, float]]] = {}
        boxes_list = self.layout.boxes
        theme = self.theme
        overlay = state.overlay
        for bi in boxes:
            b = boxes_list[int(bi)]
            fill = (
                overlay.fill(b.id)
                if overlay is not None and b.kind not in ("input", "output")
                else theme.node(self._category(b)).fill
            )
            by_fill.setdefault(fill, []).append((b.x, b.y, b.width, b.height))
        for fill, rects in by_fill.items():
            s.rects(rects, fill, None)
        marked = [(bid, theme.flash) for bid in state.highlighted]
        marked += [(bid, theme.selection) for bid in state.selected]
        if state.hovered:
            marked.append((state.hovered, theme.hover))
        if state.flash:
            marked.append((state.flash, theme.flash))
        for bid, col in marked:
            b = self.index.box(bid)
            if b is not None:
                s.rects([(b.x, b.y, b.width, b.height)], col, None)

    @staticmethod
    def _category(b: Box) -> str:
        if b.kind in ("input", "output"):
            return "io"
        if b.kind == "group":
            return "group"
        return b.category

    def _box(self, s: Surface, b: Box, state: PaintState, titles: bool, details: bool) -> None:
        t = self.theme
        style = t.node(self._category(b))
        overlay = state.overlay if b.kind not in ("input", "output") else None
        if overlay is not None:
            fill = overlay.fill(b.id)
            style = NodeStyle(fill, text_on(fill), style.border)
        op = b.title if b.kind in ("node", "function") else ""
        s.begin_item(b.id, b.kind, b.subtitle if b.kind != "group" else b.title, op)
        self._halo(s, b, state)
        if b.kind in ("input", "output"):
            self._io_box(s, b, style, titles, details)
        elif b.kind == "group":
            self._group_box(s, b, style, titles)
        else:
            self._op_box(s, b, style, state, titles, details)
        if overlay is not None and titles and b.id in overlay.badges:
            self._badge(s, b, overlay.badges[b.id])
        s.end_item()

    def _badge(self, s: Surface, b: Box, text: str) -> None:
        """The overlay's number (time, verdict) in a pill on the box's top-right corner,
        so it stays readable whatever colour the box took."""
        w = tx.text_width(text, BADGE_FONT) + 8.0
        h = BADGE_FONT.size + 5.0
        x = b.x + b.width - w + 4.0
        y = b.y - h / 2 - 1.0
        s.rounded_rect(x, y, w, h, h / 2, BADGE_FILL, None)
        s.text(x + w / 2, y + _baseline(h, BADGE_FONT.size), text, BADGE_FONT, BADGE_TEXT,
               "middle")

    def _halo(self, s: Surface, b: Box, state: PaintState) -> None:
        t = self.theme
        rings: list[tuple[str, float, float]] = []
        if b.id == state.flash:
            rings.append((t.flash, 6.0, 4.0))
        elif b.id in state.highlighted:
            rings.append((t.flash, 4.0, 2.5))
        if b.id in state.selected:
            rings.append((t.selection, 2.5, 2.5))
        if b.id == state.hovered:
            rings.append((t.hover, 2.0, 2.0))
        elif b.id in state.related_boxes:
            rings.append((t.hover, 1.5, 1.5))
        for col, grow, width in rings:
            r = RADIUS + grow
            s.rounded_rect(
                b.x - grow,
                b.y - grow,
                b.width + 2 * grow,
                b.height + 2 * grow,
                r,
                None,
                Stroke(col, width),
            )

    def _op_box(
        self,
        s: Surface,
        b: Box,
        style: NodeStyle,
        state: PaintState,
        titles: bool,
        details: bool,
    ) -> None:
        t = self.theme
        lines = b.details
        # The name goes inside the header when the layout reserved a line for it,
        # otherwise it is drawn as a caption just above the box.
        need = HEADER_HEIGHT + DETAIL_LINE * len(lines) + 2 * BODY_PAD_TOP
        names = state.show_names and bool(b.subtitle)
        inside = names and b.height >= need + SUBTITLE_HEIGHT - 0.5
        header = HEADER_HEIGHT + (SUBTITLE_HEIGHT if inside else 0.0)
        # Without readable detail text (small zoom) the whole box takes the category
        # colour rather than showing an empty white body.
        has_body = details and bool(lines) and b.height > header + 4.0
        border = Stroke(style.border, 1.0)
        if has_body:
            s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, t.node_body, None)
            s.rounded_rect(b.x, b.y, b.width, header, RADIUS, style.fill, None)
            s.rect(b.x, b.y + header - RADIUS, b.width, RADIUS, style.fill, None)
        else:
            header = b.height
            s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, style.fill, None)
        s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, None, border)
        marker_w = 0.0
        if b.expandable:
            marker_w = MARKER_SIZE + 4.0
            top = b.y + (min(header, HEADER_HEIGHT) - MARKER_SIZE) / 2
            self._marker(s, b.x + b.width - PAD_X / 2 - MARKER_SIZE, top, True, style.text)
        if not titles:
            return
        title_h = HEADER_HEIGHT if has_body or inside else b.height
        cx = b.x + b.width / 2 - marker_w / 2
        base = b.y + _baseline(title_h, tx.TITLE_FONT.size)
        title = tx.elide(b.title, tx.TITLE_FONT, b.width - 2 * TEXT_INSET - marker_w)
        s.text(cx, base, title, tx.TITLE_FONT, style.text, "middle")
        if inside:
            sub = tx.elide(b.subtitle, tx.SUBTITLE_FONT, b.width - 2 * TEXT_INSET)
            base = b.y + HEADER_HEIGHT - 3.0 + _baseline(SUBTITLE_HEIGHT, tx.SUBTITLE_FONT.size)
            s.text(b.x + b.width / 2, base, sub, tx.SUBTITLE_FONT, t.node_subtitle_text, "middle")
        elif names:
            sub = tx.elide(b.subtitle, tx.SUBTITLE_FONT, max(b.width, 220.0))
            s.text(b.x + 1.0, b.y - 3.0, sub, tx.SUBTITLE_FONT, t.edge_label)
        if has_body and details:
            self._detail_lines(s, b, b.y + header, t.node_body_text)

    def _detail_lines(self, s: Surface, b: Box, top: float, color: str) -> None:
        font = tx.DETAIL_FONT
        y = top + BODY_PAD_TOP
        for line in b.details:
            if y + DETAIL_LINE > b.y + b.height + 0.5:
                break
            text = tx.elide(line, font, b.width - PAD_X - TEXT_INSET)
            s.text(b.x + PAD_X, y + _baseline(DETAIL_LINE, font.size), text, font, color)
            y += DETAIL_LINE

    def _io_box(self, s: Surface, b: Box, style: NodeStyle, titles: bool, details: bool) -> None:
        r = min(b.height / 2, 10.0)
        s.rounded_rect(b.x, b.y, b.width, b.height, r, style.fill, Stroke(style.border, 1.0))
        if not titles:
            return
        font = tx.TITLE_FONT
        show_details = details and bool(b.details) and b.height >= HEADER_HEIGHT + DETAIL_LINE
        title_h = HEADER_HEIGHT if show_details else b.height
        title = tx.elide(b.title, font, b.width - 2 * TEXT_INSET)
        s.text(
            b.x + b.width / 2,
            b.y + _baseline(title_h, font.size),
            title,
            font,
            style.text,
            "middle",
        )
        if show_details:
            y = b.y + HEADER_HEIGHT - 2.0
            for line in b.details:
                if y + DETAIL_LINE > b.y + b.height + 0.5:
                    break
                text = tx.elide(line, tx.DETAIL_FONT, b.width - 2 * TEXT_INSET)
                base = y + _baseline(DETAIL_LINE, tx.DETAIL_FONT.size)
                s.text(b.x + b.width / 2, base, text, tx.DETAIL_FONT, style.text, "middle")
                y += DETAIL_LINE

    def _group_box(self, s: Surface, b: Box, style: NodeStyle, titles: bool) -> None:
        # A collapsed group: a second sheet peeking out behind says "there is more inside".
        off = 3.0
        s.rounded_rect(
            b.x + off,
            b.y + off,
            b.width - off,
            b.height - off,
            RADIUS,
            style.fill,
            Stroke(style.border, 1.0),
        )
        w, h = b.width - off, b.height - off
        s.rounded_rect(b.x, b.y, w, h, RADIUS, style.fill, Stroke(style.border, 1.2))
        self._marker(s, b.x + w - PAD_X / 2 - MARKER_SIZE, b.y + 5.0, True, style.text)
        if not titles:
            return
        font = tx.TITLE_FONT
        sub = b.subtitle
        title_h = HEADER_HEIGHT if sub and h >= HEADER_HEIGHT + DETAIL_LINE else h
        title = tx.elide(b.title, font, w - 2 * PAD_X - MARKER_SIZE)
        s.text(
            b.x + w / 2 - MARKER_SIZE / 2,
            b.y + _baseline(title_h, font.size),
            title,
            font,
            style.text,
            "middle",
        )
        if title_h < h:
            base = b.y + HEADER_HEIGHT - 2.0 + _baseline(DETAIL_LINE, tx.DETAIL_FONT.size)
            sub = tx.elide(sub, tx.DETAIL_FONT, w - 2 * PAD_X)
            s.text(b.x + w / 2, base, sub, tx.DETAIL_FONT, style.text, "middle")


class _PlacedLabels:
    """Decided label positions as flat arrays, for culling with one numpy mask."""

    def __init__(self, rows: list[tuple[int, float, float, float, float, float, float]]) -> None:
        a = np.array(rows, dtype=np.float64).reshape(-1, 7)
        self.edge = a[:, 0].astype(np.int64)
        self.text_x, self.base = a[:, 1], a[:, 2]
        self.x0, self.y0, self.x1, self.y1 = a[:, 3], a[:, 4], a[:, 5], a[:, 6]


class _RectGrid:
    """Rectangles bucketed in a coarse grid: fast "does this overlap anything placed"."""

    CELL = 64.0

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Rect]] = {}

    def _keys(self, r: Rect) -> list[tuple[int, int]]:
        x, y, w, h = r
        c = self.CELL
        return [
            (i, j)
            for i in range(int(x // c), int((x + w) // c) + 1)
            for j in range(int(y // c), int((y + h) // c) + 1)
        ]

    def add(self, r: Rect) -> None:
        for k in self._keys(r):
            self.cells.setdefault(k, []).append(r)

    def hits(self, r: Rect) -> bool:
        x, y, w, h = r
        for k in self._keys(r):
            for ox, oy, ow, oh in self.cells.get(k, ()):
                if x < ox + ow and ox < x + w and y < oy + oh and oy < y + h:
                    return True
        return False


def _baseline(height: float, size: float) -> float:
    """Offset from a line box's top to the baseline that centres a font of ``size``."""
    return (height + size * (tx.ASCENT - tx.DESCENT)) / 2
