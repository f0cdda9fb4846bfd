"""Which part of a layout is exported: the whole graph, the visible area, or the selection.

Qt-free. Vector and raster exports clip the drawing to the region's rectangle;
DOT and JSON, which have no rectangle, keep the boxes inside it (``crop_layout``).
"""

from __future__ import annotations

from onnxstudio.errors import ExportError
from onnxstudio.export.options import ExportOptions, Rect
from onnxstudio.layout.types import Box, GroupFrame, Layout

SELECTION_PAD = 16.0  # layout units around the selected boxes, so edges stubs show


def layout_bounds(layout: Layout) -> Rect:
    """The drawing's extent: the layout's declared size, grown to anything outside it."""
    items: list[Box | GroupFrame] = [*layout.boxes, *layout.groups]
    x0 = min(0.0, min((i.x for i in items), default=0.0))
    y0 = min(0.0, min((i.y for i in items), default=0.0))
    w, h = float(layout.width), float(layout.height)
    x1 = max(w, max((i.x + i.width for i in items), default=w))
    y1 = max(h, max((i.y + i.height for i in items), default=h))
    return (x0, y0, max(x1 - x0, 1.0), max(y1 - y0, 1.0))


def _union(rects: list[Rect]) -> Rect:
    x0 = min(r[0] for r in rects)
    y0 = min(r[1] for r in rects)
    x1 = max(r[0] + r[2] for r in rects)
    y1 = max(r[1] + r[3] for r in rects)
    return (x0, y0, x1 - x0, y1 - y0)


def _intersect(a: Rect, b: Rect) -> Rect | None:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1 - x0, y1 - y0)


def region_rect(layout: Layout, options: ExportOptions) -> Rect:
    """The rectangle, in layout units, that the export shows (before margins)."""
    bounds = layout_bounds(layout)
    if options.region == "whole":
        return bounds
    if options.region == "visible":
        if options.visible_rect is None:
            raise ExportError("no visible region was given")
        clipped = _intersect(tuple(map(float, options.visible_rect)), bounds)  # type: ignore[arg-type]
        if clipped is None:
            raise ExportError("the visible region shows no part of the graph")
        return clipped
    wanted = set(options.selection)
    rects: list[Rect] = [(b.x, b.y, b.width, b.height) for b in layout.boxes if b.id in wanted]
    rects += [(g.x, g.y, g.width, g.height) for g in layout.groups if g.id in wanted]
    if not rects:
        raise ExportError("the selection is not part of the exported layout")
    x, y, w, h = _union(rects)
    pad = SELECTION_PAD
    return (x - pad, y - pad, w + 2 * pad, h + 2 * pad)


def _inside(item: Box | GroupFrame, rect: Rect) -> bool:
    return _intersect((item.x, item.y, item.width, item.height), rect) is not None


def crop_layout(layout: Layout, options: ExportOptions) -> Layout:
    """The layout restricted to the region: boxes touching it, edges between kept boxes."""
    if options.region == "whole":
        return layout
    if options.region == "selection":
        wanted = set(options.selection)
        groups = [g for g in layout.groups if g.id in wanted]
        for g in groups:
            wanted.update(g.members)
        # Groups selected as frames keep nested frames that lie inside them.
        frames = [(g.x, g.y, g.width, g.height) for g in groups]
        nested = [g for g in layout.groups if g not in groups and any(
            _intersect((g.x, g.y, g.width, g.height), f) == (g.x, g.y, g.width, g.height)
            for f in frames)]
        groups += nested
        for g in nested:
            wanted.update(g.members)
        boxes = [b for b in layout.boxes if b.id in wanted]
    else:
        rect = region_rect(layout, options)
        boxes = [b for b in layout.boxes if _inside(b, rect)]
        groups = [g for g in layout.groups if _inside(g, rect)]
    kept = {b.id for b in boxes}
    edges = [e for e in layout.edges if e.source in kept and e.target in kept]
    return Layout(direction=layout.direction, width=layout.width, height=layout.height,
                  boxes=boxes, groups=groups, edges=edges)
