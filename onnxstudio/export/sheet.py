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


def item_count(layout: Layout) -> int:
    """Items the painter opens (boxes, edges, frames): the unit of vector progress."""
    return len(layout.boxes) + len(layout.edges) + len(layout.groups)
