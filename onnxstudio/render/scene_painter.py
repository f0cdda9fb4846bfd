"""GraphPainter: draws a Layout onto any Surface, with level of detail and culling.

The one place that decides how the graph looks. The canvas calls it for the exposed
area at the current zoom; exporters call it for the whole drawing at zoom 1, so the
file matches the screen. Only items meeting the visible rectangle are drawn (found with
:class:`~onnxstudio.render.hit_index.GraphIndex`), and below a zoom threshold text is
dropped and boxes/edges are batched, which keeps 100k-node graphs fluid. Boxes are
drawn by :mod:`~onnxstudio.render.boxes`, edge labels placed by
:mod:`~onnxstudio.render.edge_labels`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from onnxstudio.layout.types import Box, GroupFrame, Layout
from onnxstudio.model.formatting import plural
from onnxstudio.render import boxes as bx
from onnxstudio.render import text as tx
from onnxstudio.render.boxes import PaintState
from onnxstudio.render.drawing import Cubic, EdgeDraw, Point, Stroke, Surface
from onnxstudio.render.edge_labels import EdgeLabels
from onnxstudio.render.far_lines import one_per_pixel
from onnxstudio.render.geometry import (
    ARROW_LENGTH,
    arrowhead,
    end_direction,
    smooth_curve,
    straight_edge,
    trim_end,
)
from onnxstudio.render.hit_index import GROUP_LABEL_HEIGHT, GraphIndex, Rect
from onnxstudio.render.theme import LIGHT, NodeStyle, Theme

if TYPE_CHECKING:
    from onnxstudio.render.overlay import Overlay

__all__ = ["Focus", "GraphPainter", "PaintState", "lod"]

# Level of detail: the smallest on-screen size (pixels) at which text is still drawn.
MIN_TITLE_PX = 5.0
MIN_DETAIL_PX = 5.5
MIN_EDGE_LABEL_PX = 6.5
COARSE_SCALE = 0.22  # below: plain batched rectangles and straight edges
PAD_X = bx.PAD_X
MARKER_SIZE = bx.MARKER_SIZE


def lod(scale: float) -> tuple[bool, bool, bool, bool]:
    """(coarse, titles, details, edge labels) to draw at ``scale``."""
    return (
        scale < COARSE_SCALE,
        tx.TITLE_FONT.size * scale >= MIN_TITLE_PX,
        tx.DETAIL_FONT.size * scale >= MIN_DETAIL_PX,
        tx.EDGE_LABEL_FONT.size * scale >= MIN_EDGE_LABEL_PX,
    )


TRIM = ARROW_LENGTH - 1.0  # an edge's route stops this short of its arrowhead's tip
LONG_ROUTE_POINTS = 12  # routes with this many bends are smoothed by ``prepare_rest``
EDGE_MARGIN = 60.0  # edges this far outside the painted area are drawn (arrowheads, curves)


class Focus(NamedTuple):
    """The area a view will show of the next layout: ``box_id``'s centre (a box or a
    group frame) minus (dx, dy) in its middle, width × height in layout units; where
    the next layout has no ``box_id`` (View → Hide Nodes hid it), ``centre``, as the
    view stays there."""

    box_id: str
    dx: float
    dy: float
    width: float
    height: float
    centre: tuple[float, float] | None = None


class GraphPainter:
    """Paints one Layout with one Theme; create a new one when the layout changes."""

    def __init__(self, layout: Layout, theme: Theme = LIGHT, index: GraphIndex | None = None):
        self.layout = layout
        self.theme = theme
        self.index = index or GraphIndex(layout)
        self._curves: dict[int, tuple[Point, list[Cubic]]] = {}
        # per edge as drawn: start, route trimmed for the arrowhead, the arrowhead
        self._drawn: dict[int, tuple[Point, list[Cubic], list[Point]]] = {}
        # The labels get the index, not a bound method of this painter: that made a cycle
        # (painter -> labels -> method -> painter) which kept a closed tab's layout alive
        # until the next full collection.
        self.labels = EdgeLabels(layout, self.index)
        self.routes_from: GraphPainter | None = None  # whose routes this one reuses
        self._strokes: dict[tuple[str, float, bool], Stroke] = {}  # edges share a few
        self._looks = id(theme)  # first in the keys of this painter's stamps, then the kind
        self._categories: tuple[np.ndarray, list[str]] | None = None  # box_categories
        self._fills: tuple[Overlay, np.ndarray, list[str]] | None = None  # overlay_fills

    @classmethod
    def relabelled(cls, painter: GraphPainter, layout: Layout, theme: Theme) -> GraphPainter:
        """A painter for ``layout``, ``painter``'s layout with other edge labels only: its
        hit index and smoothed routes are reused (the same route objects, so a canvas
        keeps the Qt paths it built for them: 40 ms of BERT-96's first paint)."""
        new = cls(layout, theme, painter.index.relabelled(layout))
        new._curves = dict(painter._curves)
        new._drawn = dict(painter._drawn)
        new._categories, new._fills = painter._categories, painter._fills  # the same boxes
        new.routes_from = painter
        return new

    # -- public -------------------------------------------------------------------------

    def prepare(self, focus: Focus | None = None) -> GraphPainter:
        """Do the once-per-layout work now (``prepare_first``, then ``prepare_rest``):
        what a test or benchmark paints at once."""
        self.prepare_first(self.focus_area(focus) if focus is not None else None)
        self.prepare_rest()
        return self

    def prepare_first(self, area: Rect | None = None) -> GraphPainter:
        """What the first paint needs, where the layout is built, off the GUI thread:
        which edge carries which tensor, each box's style, and with ``area`` (what a
        view will show first) the routes and edge labels there (a fifth of the first
        paint of expanded dag100k)."""
        self.labels.tensors()
        self.box_categories()
        if area is not None:
            for i in self.index.edge_indices_in(area, margin=EDGE_MARGIN).tolist():
                self.drawn(i)
            self.labels.prepare_area(area)
        return self

    def prepare_rest(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        """The rest, for a task after the first paint: the curves of long routes (a skip
        connection bends at every layer it passes; the hundred such edges of BERT-96's
        first view took 100 ms to smooth), every tensor's home tile (``by_tile``) and each
        box's edges (``GraphIndex.adjacency``).
        Not every edge label (1.5-2 s of expanded dag100k): a paint places the tiles it
        shows (a few ms each), the canvas those around the view between paints, an
        export all of them."""
        for i in np.flatnonzero(self.index.route_points() >= LONG_ROUTE_POINTS).tolist():
            self.drawn(i)
        if not cancelled():
            self.labels.by_tile()
            self.index.adjacency()  # what hovering and selecting ask

    def focus_area(self, focus: Focus) -> Rect | None:
        """The area of this layout ``focus`` names (None when its box is not here)."""
        centre = self.index.centre(focus.box_id)
        if centre is not None:
            centre = (centre[0] - focus.dx, centre[1] - focus.dy)
        elif focus.centre is not None:  # hidden anchor: the view keeps its centre
            centre = focus.centre
        else:
            return None
        x, y = centre[0] - focus.width / 2, centre[1] - focus.height / 2
        return (x, y, focus.width, focus.height)

    def prepared_routes(self) -> list[tuple[Point, list[Cubic]]]:
        """The routes drawn so far (after ``prepare``: the long ones), as the surface
        gets them: a screen may build its paths for them ahead of the first paint."""
        return [(start, trimmed) for start, trimmed, _ in self._drawn.values()]

    def bounds(self, margin: float = 0.0) -> Rect:
        return (-margin, -margin, self.layout.width + 2 * margin, self.layout.height + 2 * margin)

    def paint(
        self,
        surface: Surface,
        visible_rect: Rect | None = None,
        scale: float = 1.0,
        state: PaintState | None = None,
    ) -> None:
        """Draw group frames, edges, group titles (over the edges), then edge labels and
        boxes that meet ``visible_rect`` (all if None)."""
        state = state or PaintState()
        self.paint_lower(surface, visible_rect, scale, state)
        self.paint_upper(surface, visible_rect, scale, state)

    def paint_lower(self, surface: Surface, visible_rect: Rect | None, scale: float,
                    state: PaintState) -> None:
        """The first half of :meth:`paint`: group frames, edges, group titles."""
        coarse, titles, _, _ = lod(scale)
        idx = self.index
        groups = idx.group_indices_in(visible_rect)
        if coarse:
            self._coarse_groups(surface, groups, scale)
            self._coarse_edges(surface, visible_rect, scale)
            return
        edges = idx.edge_indices_in(visible_rect, margin=EDGE_MARGIN)
        for gi in groups:
            self._group(surface, self.layout.groups[int(gi)])
        related = state.related_edges
        chosen = state.selected_edges - related
        n = len(self.layout.edges)
        batch: list[EdgeDraw] = []
        draw = self._edge_draw
        for ei in edges.tolist():
            if ei not in related and ei not in chosen:
                draw(batch, ei, scale, None)
        for ei in sorted(chosen):  # drawn over the rest, so a selection can be traced
            if 0 <= ei < n:
                draw(batch, ei, scale, self.theme.selection)
        for ei in sorted(related):
            if 0 <= ei < n:
                draw(batch, ei, scale, self.theme.hover)
        surface.edges(batch)
        if titles:
            for gi in groups:
                self._group_label(surface, self.layout.groups[int(gi)])

    def paint_upper(self, surface: Surface, visible_rect: Rect | None, scale: float,
                    state: PaintState) -> None:
        """The second half of :meth:`paint`: edge labels and boxes, over the rest."""
        coarse, titles, details, edge_labels = lod(scale)
        indices = self.index.box_indices_in(visible_rect)
        if coarse:
            self._coarse_boxes(surface, indices, state)
            return
        if edge_labels and state.show_edge_labels:
            self.labels.paint(surface, self.theme, visible_rect, state.related_edges,
                              state.show_names)
        boxes = self.layout.boxes
        for bi in indices.tolist():
            self._box(surface, boxes[bi], state, titles, details)

    def curve(self, edge_index: int) -> tuple[Point, list[Cubic]]:
        """The smooth route of an edge (cached)."""
        hit = self._curves.get(edge_index)
        if hit is None:
            e = self.layout.edges[edge_index]
            pts = e.points or self.index.centre_line(e)
            hit = smooth_curve(pts)
            self._curves[edge_index] = hit
        return hit

    # -- groups -------------------------------------------------------------------------

    def _group(self, s: Surface, g: GroupFrame) -> None:
        t = self.theme
        s.begin_item(g.id, "group", g.label, "")
        s.rounded_rect(g.x, g.y, g.width, g.height, 6.0, t.group_fill(g.depth),
                       Stroke(t.group_border, 1.0))
        s.end_item()

    def _coarse_groups(self, s: Surface, groups: np.ndarray, scale: float) -> None:
        """Plain frames, one batch per depth: ``groups`` come outermost first, and inner
        frames lie within outer ones, so depth by depth paints each over its parent."""
        t = self.theme
        stroke = Stroke(t.group_border, max(1.0, 0.8 / scale))
        depths = self.index.gdepth[groups]
        for depth in np.unique(depths).tolist():
            s.rects(self.index.group_rects[groups[depths == depth]],
                    t.group_fill(int(depth)), stroke)

    def _group_label(self, s: Surface, g: GroupFrame) -> None:
        """The frame's − marker, name and count, on the frame's own colour: drawn after
        the edges, so an edge entering the frame passes under its title, never across."""
        s.begin_item(g.id + "#title", "group-title", g.label, "")
        if s.keeps_looks:
            s.stamp((self._looks, "group-title", g.label, g.node_count, g.width, g.depth),
                    (g.x, g.y), lambda: self._group_title(s, g))
        else:
            self._group_title(s, g)
        s.end_item()

    def _group_title(self, s: Surface, g: GroupFrame) -> None:
        t = self.theme
        base = g.y + GROUP_LABEL_HEIGHT / 2 + 4.0
        x = g.x + PAD_X
        count = plural(g.node_count, "node")
        avail = g.x + g.width - PAD_X - x - MARKER_SIZE - 5.0
        count_w = tx.text_width(count, tx.GROUP_COUNT_FONT) + 8.0
        label_w = tx.text_width(g.label, tx.GROUP_LABEL_FONT)
        # The name matters more than the count: drop the count before eliding the name.
        with_count = label_w + count_w <= avail
        label = g.label if with_count else tx.elide(g.label, tx.GROUP_LABEL_FONT, avail)
        used = MARKER_SIZE + 5.0 + (label_w + count_w if with_count else
                                    tx.text_width(label, tx.GROUP_LABEL_FONT)) + 4.0
        s.rect(g.x + 1.0, g.y + 1.0, min(used + PAD_X, g.width - 2.0), GROUP_LABEL_HEIGHT - 2.0,
               t.group_fill(g.depth), None)
        bx.marker(s, x, g.y + (GROUP_LABEL_HEIGHT - MARKER_SIZE) / 2, False, t.group_label)
        x += MARKER_SIZE + 5.0
        if label:
            s.text(x, base, label, tx.GROUP_LABEL_FONT, t.group_label)
        if with_count:
            s.text(x + label_w + 8.0, base, count, tx.GROUP_COUNT_FONT, t.group_count)

    # -- edges --------------------------------------------------------------------------

    def drawn(self, i: int) -> tuple[Point, list[Cubic], list[Point]] | None:
        """Edge ``i`` as drawn: start, route trimmed for the arrowhead, the arrowhead
        (cached; None for an edge without a route)."""
        drawn = self._drawn.get(i)
        if drawn is not None:
            return drawn
        points = self.layout.edges[i].points
        if len(points) == 2:  # most edges: the general path below, unrolled
            drawn = straight_edge(points[0], points[1], TRIM)
        if drawn is None:
            start, segs = self.curve(i)
            if not segs:
                return None
            way = end_direction(start, segs)
            drawn = (start, trim_end(start, segs, TRIM, way), arrowhead(segs[-1][2], way))
        self._drawn[i] = drawn
        return drawn

    def _edge_draw(self, batch: list[EdgeDraw], i: int, scale: float, color: str | None
                   ) -> None:
        """Add edge ``i`` as drawn to ``batch`` (nothing for an edge without a route)."""
        drawn = self.drawn(i)
        if drawn is None:
            return
        e = self.layout.edges[i]
        t = self.theme
        col = color or (t.back_edge if e.back else t.edge)
        width = 2.0 if color else 1.2
        width = max(width, 0.9 / scale)
        key = (col, width, e.back)
        stroke = self._strokes.get(key)
        if stroke is None:
            stroke = self._strokes[key] = Stroke(col, width, (4.0, 3.0) if e.back else None)
        start, trimmed, arrow = drawn  # the same lists each paint: a surface may cache them
        batch.append((f"edge{i}", e.value, start, trimmed, stroke, arrow, col))

    def _coarse_edges(self, s: Surface, visible_rect: Rect | None, scale: float) -> None:
        """The routes' straight segments that meet the area, in one batch (the index
        keeps them in one array), one line per pixel path (``far_lines``)."""
        width = max(1.0, 0.8 / scale)
        segments = one_per_pixel(self.index.segments_in(visible_rect, margin=width), scale)
        if len(segments):
            s.lines(segments, Stroke(self.theme.edge, width))

    # -- boxes --------------------------------------------------------------------------

    def _coarse_boxes(self, s: Surface, boxes: np.ndarray, state: PaintState) -> None:
        """Plain rectangles, one batch per fill (boxes never overlap)."""
        theme = self.theme
        overlay = state.overlay
        if overlay is None:  # the fill follows the category: numpy picks each batch
            codes, categories = self.box_categories()
            shown = codes[boxes]
            by_fill: dict[str, list[int]] = {}
            for code, category in enumerate(categories):
                by_fill.setdefault(theme.node(category).fill, []).append(code)
            for fill, kinds in by_fill.items():
                chosen = boxes[np.isin(shown, kinds)]
                if len(chosen):
                    s.rects(self.index.box_rects[chosen], fill, None)
        else:  # one batch per colour the overlay gives, picked by numpy too
            codes, fills = self.overlay_fills(overlay)
            shown = codes[boxes]
            for code in np.unique(shown).tolist():
                fill = fills[code] if code >= 0 else theme.node("io").fill
                s.rects(self.index.box_rects[boxes[shown == code]], fill, None)
        self.coarse_marks(s, state)

    def coarse_marks(self, s: Surface, state: PaintState) -> None:
        """Search matches, selection, hover and flash as filled rectangles at the coarse
        level of detail (a canvas draws them over its far-zoom picture too)."""
        theme = self.theme
        marked = [(bid, theme.flash) for bid in state.highlighted]
        marked += [(bid, theme.selection) for bid in state.selected]
        if state.hovered:
            marked.append((state.hovered, theme.hover))
        if state.flash:
            marked.append((state.flash, theme.flash))
        for bid, col in marked:
            mark = self.index.box(bid)
            if mark is not None:
                s.rects([(mark.x, mark.y, mark.width, mark.height)], col, None)

    def box_categories(self) -> tuple[np.ndarray, list[str]]:
        """Each box's style category, as a code per box and the categories by code
        (made once per layout: ``prepare_first`` does it off the GUI thread)."""
        if self._categories is None:
            codes: dict[str, int] = {}
            per_box = np.fromiter(
                (codes.setdefault(self._category(b), len(codes)) for b in self.layout.boxes),
                dtype=np.int32, count=len(self.layout.boxes))
            self._categories = (per_box, list(codes))
        return self._categories

    def overlay_fills(self, overlay: Overlay) -> tuple[np.ndarray, list[str]]:
        """Each box's fill under ``overlay`` as a code per box (-1: an input or output,
        the theme's) and the fills by code: made once per overlay, where the layout task
        folds it (a Python pass over BERT-96's boxes took 10 ms of every far paint)."""
        if self._fills is None or self._fills[0] is not overlay:
            codes: dict[str, int] = {}
            per_box = np.fromiter(
                (-1 if b.kind in ("input", "output") else
                 codes.setdefault(overlay.fill(b.id), len(codes)) for b in self.layout.boxes),
                dtype=np.int32, count=len(self.layout.boxes))
            self._fills = (overlay, per_box, list(codes))
        return self._fills[1], self._fills[2]

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
            from onnxstudio.render.overlay import text_on  # loaded with the overlay

            fill = overlay.fill(b.id)
            style = NodeStyle(fill, text_on(fill), style.border)
        op = b.title if b.kind in ("node", "function") else ""
        s.begin_item(b.id, b.kind, b.subtitle if b.kind != "group" else b.title, op)
        badge = overlay.badges.get(b.id) if overlay is not None else None
        if s.keeps_looks and badge is None and not bx.ringed(b, state):
            # it looks like every box of the same kind, text and size
            sub = b.subtitle if state.show_names or b.kind == "group" else ""
            shift = self._caption_shift(b, state)
            key = (self._looks, b.kind, style.fill, style.text, style.border, b.title, sub,
                   shift, b.width, b.height, b.expandable, titles, details, *b.details)
            s.stamp(key, (b.x, b.y), lambda: self._look(s, b, style, state, titles, details))
        else:
            bx.halo(s, t, b, state)
            self._look(s, b, style, state, titles, details)
            if badge is not None and titles:
                bx.badge(s, b, badge)
        s.end_item()

    def _caption_shift(self, b: Box, state: PaintState) -> float:
        """Where the node's name above its box starts, clear of the arrows entering it."""
        if not state.show_names or b.kind != "node":
            return 0.0
        return self.labels.caption_shifts().get(b.id, 0.0)

    def _look(self, s: Surface, b: Box, style: NodeStyle, state: PaintState, titles: bool,
              details: bool) -> None:
        if b.kind in ("input", "output"):
            bx.io_box(s, b, style, titles, details)
        elif b.kind == "group":
            bx.group_box(s, b, style, titles)
        else:
            bx.op_box(s, self.theme, b, style, state, titles, details,
                      self._caption_shift(b, state))
