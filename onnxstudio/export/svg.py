"""SVG export: vector, full detail, text kept as text, and no Qt.

It goes through render's SVG surface, so each node is a ``<g>`` carrying its name and op
type (what makes an exported diagram searchable).
"""

from __future__ import annotations

import contextlib
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

    The halves are rarely equal (BERT-96's upper is a fifth longer, dag100k's twice the
    lower): once this process is done, it asks the fork to stop halfway through the
    boxes it has left (pipes; the fork looks every BOX_RUN boxes) and paints the rest.

    The same bytes as one paint: the parts share no state but the item ids, which must
    be unique; if the fork's ids meet this process', its part is painted again here.
    """

    def __init__(self, layout: Layout, theme: Theme, svg: SvgSurface, rect: Rect,
                 state: PaintState, head: str, tail: str,
                 meanwhile: Callable[[], object] | None) -> None:
        self.svg, self.head, self.tail, self.meanwhile = svg, head, tail, meanwhile
        graph = GraphPainter(layout, theme, GraphIndex(layout, picking=False))
        self.paint_upper = functools.partial(graph.paint_upper, svg, rect, 1.0, state)
        self.paint_boxes_from = functools.partial(graph.paint_boxes_from, svg, rect, 1.0,
                                                  state)
        self.before = before = set(svg.item_ids)
        start = len(svg.parts)
        boxes = len(graph.index.box_indices_in(rect))
        asked, self.ask = os.pipe()  # this process -> fork: "stop halfway"
        self.told, told = os.pipe()  # fork -> this process: where it stops
        os.set_blocking(asked, False)
        self.cut = boxes

        def until(done: int) -> int:  # in the fork, every BOX_RUN boxes
            if self.cut == boxes:
                with contextlib.suppress(BlockingIOError):
                    if os.read(asked, 1):
                        self.cut = done + (boxes - done) // 2
                        os.write(told, self.cut.to_bytes(8, "little"))
            return self.cut

        def upper() -> tuple[bytes, set[str]]:
            self.paint_upper(until=until)
            if self.cut == boxes:  # all painted, or stopped at the very end
                os.write(told, boxes.to_bytes(8, "little"))
            return "\n".join(svg.parts[start:]).encode(), svg.item_ids - before

        self.fork = Forked(upper)
        for fd in (asked, told):
            os.close(fd)  # the fork's ends
        if self.fork.running:
            try:
                graph.paint_lower(svg, rect, 1.0, state)
            except BaseException:
                self.cancel()
                raise
            self.ours = svg.item_ids - before
        else:  # no fork here: one paint
            self.cancel()
            graph.paint(svg, rect, 1.0, state)

    def write(self, stream: IO[bytes]) -> None:
        """The document: this half goes out while the fork still paints the other."""
        parts = self.svg.parts
        lower = len(parts)
        stream.write((self.head + "\n".join(parts)).encode())
        if self.fork.running:
            stream.flush()
            os.fsync(stream.fileno())  # meanwhile: the final fsync waits for half as much
            if self.meanwhile is not None:
                self.meanwhile()
            self.paint_boxes_from(self._cut())
            try:
                text, ids = self.fork.result()
            except ForkFailed:
                text, ids = b"", None
            ours = self.svg.item_ids - self.before
            if ids is None or not ids.isdisjoint(ours):  # the whole upper half, here
                self.svg.item_ids.difference_update(ours - self.ours)
                del parts[lower:]
                self.paint_upper()
                text = b""
            if text:
                stream.write(b"\n" + text if lower else text)
            if len(parts) > lower:
                joined = "\n".join(parts[lower:]).encode()
                stream.write(b"\n" + joined if lower or text else joined)
        elif self.meanwhile is not None:
            self.meanwhile()
        stream.write(self.tail.encode())

    def _cut(self) -> int:
        """Ask the fork to stop; the first box it leaves to this process."""
        with contextlib.suppress(OSError):  # the fork has ended: it answered, or failed
            os.write(self.ask, b"x")
        answer = b""
        while len(answer) < 8:
            more = os.read(self.told, 8 - len(answer))
            if not more:  # no answer: the fork failed, and write paints its half here
                return 1 << 62
            answer += more
        return int.from_bytes(answer, "little")

    def cancel(self) -> None:
        """Stop the fork if the file was not written; close the pipes."""
        self.fork.cancel()
        for fd in (self.ask, self.told):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ask = self.told = -1
