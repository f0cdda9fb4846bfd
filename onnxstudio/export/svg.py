"""SVG export: vector, full detail, text kept as text, and no Qt.

It goes through render's SVG surface, so each node is a ``<g>`` carrying its name and op
type (what makes an exported diagram searchable).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING

from onnxstudio.export.atomic import atomic_write
from onnxstudio.export.options import (
    CancelFn,
    ExportCancelled,
    ExportOptions,
    ExportResult,
    ProgressFn,
)
from onnxstudio.export.sheet import item_count, paint_state, plan_sheet
from onnxstudio.export.surfaces import WatchSurface
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.scene_painter import GraphPainter
from onnxstudio.render.svg_surface import SvgSurface

PARTS_PER_WRITE = 2000

if TYPE_CHECKING:
    from onnxstudio.layout.types import Layout
    from onnxstudio.model.graph import Model


def export_svg(layout: Layout, model: Model | None, dest: Path, options: ExportOptions,
               result: ExportResult, protect: list[Path], progress: ProgressFn | None = None,
               cancel: CancelFn | None = None) -> None:
    sheet = plan_sheet(layout, model, options)
    svg = SvgSurface()
    sheet.paint_title(svg)
    if sheet.clip:
        x, y, w, h = sheet.diagram_rect()
        svg.parts.append(f'<clipPath id="export-region"><rect x="{x:g}" y="{y:g}" '
                         f'width="{w:g}" height="{h:g}"/></clipPath>'
                         '<g clip-path="url(#export-region)">')
    head, tail = svg.frame(0.0, 0.0, sheet.width, sheet.height, sheet.theme.canvas)
    if sheet.clip:
        tail = "\n</g>" + tail
    total = item_count(layout) + 1
    svg.shift(sheet.dx, sheet.dy)  # the diagram's place on the sheet
    # all of a whole drawing: no culling, whose index of the routes costs BERT-96 10 ms
    rect = sheet.layout_rect(None) if sheet.clip else None
    state = paint_state(options, layout, model)
    graph = GraphPainter(layout, sheet.theme, GraphIndex(layout, picking=False))
    graph.paint(WatchSurface(svg, progress, cancel, total=total), rect, 1.0, state)
    if cancel is not None and cancel():
        raise ExportCancelled()
    parts = svg.parts

    def write(handle: IO[bytes]) -> None:
        """``head + "\\n".join(parts) + tail`` a run of parts at a time: joined and
        encoded at once, BERT-96's held the GIL (so froze the window) for ~120 ms."""
        handle.write(head.encode("utf-8"))
        for start in range(0, len(parts), PARTS_PER_WRITE):
            run = "\n".join(parts[start:start + PARTS_PER_WRITE])
            handle.write((f"\n{run}" if start else run).encode("utf-8"))
        handle.write(tail.encode("utf-8"))

    atomic_write(dest, write, protect)
    if progress is not None:
        progress(total, total)
    result.size = (sheet.width, sheet.height)
