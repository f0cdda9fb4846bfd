"""SVG export: vector, full detail, text kept as text, and no Qt.

It goes through render's SVG surface, so each node is a ``<g>`` carrying its name and op
type (what makes an exported diagram searchable).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
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
from onnxstudio.forked import Forked, ForkFailed
from onnxstudio.render.hit_index import GraphIndex
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
               cancel: CancelFn | None = None, parallel: bool = False,
               meanwhile: Callable[[], object] | None = None) -> None:
    """``parallel``: paint half of the drawing in a forked process (one-shot commands
    only; see onnxstudio.forked), unless progress is reported or cancel polled; then
    ``meanwhile`` runs while the fork finishes, else once the file is written."""
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
    rect, state = sheet.layout_rect(None), paint_state(options, layout, model)
    if parallel and progress is None and cancel is None:
        halves = _TwoHalves(layout, sheet.theme, svg, rect, state, head, tail, meanwhile)
        meanwhile = None
        try:
            atomic_write(dest, halves.write, protect)
        finally:
            halves.cancel()
    else:
        graph = GraphPainter(layout, sheet.theme, GraphIndex(layout, picking=False))
        graph.paint(WatchSurface(svg, progress, cancel, total=total), rect, 1.0, state)
        text = head + "\n".join(svg.parts) + tail
        if cancel is not None and cancel():
            raise ExportCancelled()
        atomic_write(dest, text, protect)
    if meanwhile is not None:
        meanwhile()
    if progress is not None:
        progress(total, total)
    result.size = (sheet.width, sheet.height)


class _TwoHalves:
    """A GraphPainter's paint onto ``svg``, its upper half (edge labels, boxes) painted by
    a fork while this process paints the lower one (frames, edges) and writes it out.
    The painter is made before the fork, so the fork starts with its hit index built.

    The same bytes as one paint: the halves share no state but the item ids, which must
    be unique; if the fork's ids meet this process', its half is painted again here.
    """

    def __init__(self, layout: Layout, theme: Theme, svg: SvgSurface, rect: Rect,
                 state: PaintState, head: str, tail: str,
                 meanwhile: Callable[[], object] | None) -> None:
        self.svg, self.head, self.tail, self.meanwhile = svg, head, tail, meanwhile
        graph = GraphPainter(layout, theme, GraphIndex(layout, picking=False))
        self.paint_upper = functools.partial(graph.paint_upper, svg, rect, 1.0, state)
        before = set(svg.item_ids)
        start = len(svg.parts)

        def upper() -> tuple[bytes, set[str]]:
            self.paint_upper()
            return "\n".join(svg.parts[start:]).encode(), svg.item_ids - before

        self.fork = Forked(upper)
        if self.fork.running:
            try:
                graph.paint_lower(svg, rect, 1.0, state)
            except BaseException:
                self.fork.cancel()
                raise
            self.ours = svg.item_ids - before
        else:  # no fork here: one paint
            self.fork.cancel()
            graph.paint(svg, rect, 1.0, state)

    def write(self, stream: IO[bytes]) -> None:
        """The document: this half goes out while the fork still paints the other."""
        lower = len(self.svg.parts)
        stream.write((self.head + "\n".join(self.svg.parts)).encode())
        if self.fork.running:
            stream.flush()
            os.fsync(stream.fileno())  # meanwhile: the final fsync waits for half as much
            if self.meanwhile is not None:
                self.meanwhile()
            try:
                text, ids = self.fork.result()
            except ForkFailed:
                text, ids = b"", None
            if ids is None or not ids.isdisjoint(self.ours):
                self.paint_upper()
                text = "\n".join(self.svg.parts[lower:]).encode()
            if text:
                stream.write(b"\n" + text if lower else text)
        elif self.meanwhile is not None:
            self.meanwhile()
        stream.write(self.tail.encode())

    def cancel(self) -> None:
        """Stop the fork if the file was not written."""
        self.fork.cancel()
