"""SVG export: vector, full detail, text kept as text, and no Qt.

It goes through render's SVG surface, so each node is a ``<g>`` carrying its name and op
type (what makes an exported diagram searchable).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
from onnxstudio.forked import Forked, ForkFailed
from onnxstudio.render.scene_painter import GraphPainter
from onnxstudio.render.svg_surface import SvgSurface

if TYPE_CHECKING:
    from onnxstudio.layout.types import Layout
    from onnxstudio.model.graph import Model
    from onnxstudio.render.boxes import PaintState
    from onnxstudio.render.hit_index import Rect
    from onnxstudio.render.theme import Theme


def export_svg(layout: Layout, model: Model | None, dest: Path, options: ExportOptions,
               result: ExportResult, protect: list[Path], progress: ProgressFn | None = None,
               cancel: CancelFn | None = None, parallel: bool = False) -> None:
    """``parallel``: paint half of the drawing in a forked process (one-shot commands
    only; see onnxstudio.forked), unless progress is reported or cancel polled."""
    sheet = plan_sheet(layout, model, options)
    svg = SvgSurface()
    sheet.paint_title(svg)
    if sheet.clip:
        x, y, w, h = sheet.diagram_rect()
        svg.parts.append(f'<clipPath id="export-region"><rect x="{x:g}" y="{y:g}" '
                         f'width="{w:g}" height="{h:g}"/></clipPath>'
                         '<g clip-path="url(#export-region)">')
    total = item_count(layout) + 1
    svg.shift(sheet.dx, sheet.dy)  # the diagram's place on the sheet
    rect, state = sheet.layout_rect(None), paint_state(options, layout, model)
    if parallel and progress is None and cancel is None:
        _paint_in_two(layout, sheet.theme, svg, rect, state)
    else:
        graph = GraphPainter(layout, sheet.theme)
        graph.paint(WatchSurface(svg, progress, cancel, total=total), rect, 1.0, state)
    if sheet.clip:
        svg.parts.append("</g>")
    text = svg.document(0.0, 0.0, sheet.width, sheet.height, sheet.theme.canvas)
    if cancel is not None and cancel():
        raise ExportCancelled()
    atomic_write(dest, text, protect)
    if progress is not None:
        progress(total, total)
    result.size = (sheet.width, sheet.height)


def _paint_in_two(layout: Layout, theme: Theme, svg: SvgSurface, rect: Rect,
                  state: PaintState) -> None:
    """A GraphPainter's paint onto ``svg``, its upper half (edge labels, boxes) painted by
    a fork while this process paints the lower one (frames, edges); each makes its own
    painter (the hit index: 30 ms of BERT-96). On BERT-96 this process spends 0.82 s of
    CPU instead of 1.34, the fork 0.74 s meanwhile.

    The same bytes as one paint: the halves share no state but the item ids, which must
    be unique; if the fork's ids meet this process', its half is painted again here.
    """
    before = set(svg.item_ids)
    start = len(svg.parts)

    def upper() -> tuple[str | None, set[str]]:
        GraphPainter(layout, theme).paint_upper(svg, rect, 1.0, state)
        parts = svg.parts[start:]
        return ("\n".join(parts) if parts else None), svg.item_ids - before

    fork = Forked(upper)
    graph = GraphPainter(layout, theme)
    if not fork.running:  # no fork here: one paint
        fork.cancel()
        graph.paint(svg, rect, 1.0, state)
        return
    try:
        graph.paint_lower(svg, rect, 1.0, state)
    except BaseException:
        fork.cancel()
        raise
    try:
        text, ids = fork.result()
    except ForkFailed:
        text, ids = None, None
    if ids is None or not ids.isdisjoint(svg.item_ids - before):
        graph.paint_upper(svg, rect, 1.0, state)
    elif text is not None:
        svg.parts.append(text)
        svg.item_ids.update(ids)
