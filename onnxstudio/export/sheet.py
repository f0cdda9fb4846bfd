"""The exported sheet: region + margins + optional title block, in layout units.

Every format (SVG, PNG, PDF) places the same sheet, so a file's size and the spot
where the diagram sits are computed once here. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from onnxstudio.export.options import ExportOptions, Rect, TitleBlock, title_block_for
from onnxstudio.export.region import region_rect
from onnxstudio.export.titleblock import band_height, block_size, draw_title_block
from onnxstudio.layout.types import Layout
from onnxstudio.render.drawing import Surface
from onnxstudio.render.theme import Theme, theme_named

if TYPE_CHECKING:
    from onnxstudio.model.graph import Model
    from onnxstudio.render.scene_painter import PaintState

CULL_PAD = 40.0  # draw items this close outside a strip/page too: labels, arrowheads


@dataclass
class Sheet:
    """Where the diagram lands: sheet = layout + (dx, dy); size width × height."""

    region: Rect  # the part of the layout shown
    margin: float
    title: TitleBlock | None
    band: float  # height of the title band above the diagram (0 without a title)
    width: float
    height: float
    theme: Theme
    clip: bool  # region is not the whole graph: clip at its edges

    @property
    def dx(self) -> float:
        return self.margin - self.region[0]

    @property
    def dy(self) -> float:
        return self.margin + self.band - self.region[1]

    def diagram_rect(self) -> Rect:
        """The region's rectangle in sheet coordinates."""
        return (self.margin, self.margin + self.band, self.region[2], self.region[3])

    def layout_rect(self, sheet_rect: Rect | None) -> Rect:
        """The part of the layout to paint for a sheet window (strip, page), padded."""
        if sheet_rect is None:
            x, y, w, h = self.region
        else:
            x, y, w, h = sheet_rect[0] - self.dx, sheet_rect[1] - self.dy, *sheet_rect[2:]
        return (x - CULL_PAD, y - CULL_PAD, w + 2 * CULL_PAD, h + 2 * CULL_PAD)

    def paint_title(self, surface: Surface) -> None:
        if self.title is not None:
            draw_title_block(surface, self.title, self.theme, self.margin, self.margin)


def plan_sheet(layout: Layout, model: Model | None, options: ExportOptions) -> Sheet:
    region = region_rect(layout, options)
    title = None
    if options.title_block:
        count = sum(1 for b in layout.boxes if b.kind == "node") if model is None else None
        title = title_block_for(model, options.date, count)
    band = band_height(title)
    title_w = block_size(title)[0] if title is not None else 0.0
    m = options.margin
    return Sheet(region=region, margin=m, title=title, band=band,
                 width=max(region[2], title_w) + 2 * m, height=region[3] + band + 2 * m,
                 theme=theme_named(options.theme_name()), clip=options.region != "whole")


def paint_state(options: ExportOptions, layout: Layout | None = None,
                model: Model | None = None) -> PaintState:
    """What the painter adds on top of the layout: names and the canvas' overlay (folded
    into this export's layout, which may be expanded differently) if asked; never a
    selection."""
    from onnxstudio.render.scene_painter import PaintState

    overlay = None
    if options.overlay is not None and layout is not None and model is not None:
        from onnxstudio.render.overlay import build_overlay

        overlay = build_overlay(layout, model.graph, options.overlay)
    return PaintState(show_names=options.show_names, overlay=overlay)


@dataclass(frozen=True)
class PageGrid:
    """Sheet windows of ``width`` × ``height`` every ``step_x``/``step_y`` (overlapping)."""

    width: float
    height: float
    step_x: float
    step_y: float
    cols: int
    rows: int


def occupied(layout: Layout, sheet: Sheet, grid: PageGrid) -> list[Rect]:
    """The grid's windows (pages) that show something: a box, a piece of an edge or the
    title block. One far-off node sized a page grid whose other pages were blank (27 of
    an A4 BERT-12's 56). Each item marks the cells it touches, so the cost is the items',
    not items × pages."""
    import numpy as np

    rects = [(b.x, b.y, b.x + b.width, b.y + b.height) for b in layout.boxes]
    for edge in layout.edges:  # each segment's bounds: a long diagonal is not a page
        rects += [(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
                  for a, b in zip(edge.points, edge.points[1:], strict=False)]
    mask = np.zeros((grid.rows, grid.cols), dtype=bool)
    if sheet.title is not None:
        mask[0, :] = True
    if rects:
        items = np.asarray(rects, dtype=np.float64)
        items[:, [0, 2]] += sheet.dx  # into sheet coordinates
        items[:, [1, 3]] += sheet.dy

        def cells(low: np.ndarray, high: np.ndarray, size: float, step: float,
                  count: int) -> tuple[np.ndarray, np.ndarray]:
            first = np.clip(np.ceil((low - size) / step), 0, count - 1).astype(np.int64)
            last = np.clip(np.floor(high / step), 0, count - 1).astype(np.int64)
            return first, last

        c0, c1 = cells(items[:, 0], items[:, 2], grid.width, grid.step_x, grid.cols)
        r0, r1 = cells(items[:, 1], items[:, 3], grid.height, grid.step_y, grid.rows)
        for dr in range(int((r1 - r0).max()) + 1):
            for dc in range(int((c1 - c0).max()) + 1):
                hit = (r0 + dr <= r1) & (c0 + dc <= c1)
                mask[r0[hit] + dr, c0[hit] + dc] = True
    if not mask.any():
        mask[0, 0] = True
    return [(c * grid.step_x, r * grid.step_y, grid.width, grid.height)
            for r in range(grid.rows) for c in range(grid.cols) if mask[r, c]]


def item_count(layout: Layout) -> int:
    """Items the painter opens (boxes, edges, frames): the unit of vector progress."""
    return len(layout.boxes) + len(layout.edges) + len(layout.groups)
