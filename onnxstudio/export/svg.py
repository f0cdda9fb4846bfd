"""SVG export: vector, full detail, text kept as text, and no Qt.

It goes through render's SVG surface, so each node is a ``<g>`` carrying its name and op
type (what makes an exported diagram searchable).
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from onnxstudio.concurrency.fork import Forked, ForkFailed
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
    only; see onnxstudio.concurrency.fork), unless progress is reported or cancel polled; then
    ``meanwhile`` runs while the fork finishes (the caller runs it otherwise)."""
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
    if parallel and progress is None and cancel is None:
        halves = _TwoHalves(layout, sheet.theme, svg, rect, state, head, tail, meanwhile)
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
    if progress is not None:
        progress(total, total)
    result.size = (sheet.width, sheet.height)


class _TwoHalves:
    """A GraphPainter's paint into ``svg``'s file, its upper half (edge labels, boxes)
    painted by a fork while this process paints the lower one (frames, edges) and writes
    it out. The painter is made before the fork, so the fork starts with its index.

    The halves are rarely equal (the upper places every edge label first): once this
    process is done, it asks the fork to stop halfway through the boxes it has left, less
    what its part's write-out costs (pipes; the fork looks every BOX_RUN boxes), and
    paints the rest.
    The ask carries where the fork's part goes in the file, which the fork writes
    itself: its 5 MB of BERT-96 never pass through a pipe.

    The same bytes as one paint: the parts share no state but the item ids, which must
    be unique; if the fork's ids meet this process', its part is painted again here.
    """

    def __init__(self, layout: Layout, theme: Theme, svg: SvgSurface, rect: Rect | None,
                 state: PaintState, head: str, tail: str,
                 meanwhile: Callable[[], object] | None) -> None:
        self.svg, self.head, self.tail, self.meanwhile = svg, head, tail, meanwhile
        self.graph = GraphPainter(layout, theme, GraphIndex(layout, picking=False))
        self.rect, self.state = rect, state
        self.fork: Forked[tuple[int, set[str]]] | None = None
        self.ask = self.told = -1

    def write(self, stream: IO[bytes]) -> None:
        """The whole document into ``stream``, a file (the fork writes into it too)."""
        svg, graph, rect, state = self.svg, self.graph, self.rect, self.state
        parts, before, start = svg.parts, set(svg.item_ids), len(svg.parts)
        stream.write(self.head.encode())
        stream.flush()
        self.fork = self._start(stream.fileno(), start, before)
        if not self.fork.running:  # no fork here: one paint
            self.cancel()
            graph.paint(svg, rect, 1.0, state)
            stream.write(("\n".join(parts) + self.tail).encode())
            return
        graph.paint_lower(svg, rect, 1.0, state)
        ours, lower = svg.item_ids - before, len(parts)
        stream.write("\n".join(parts).encode())
        stream.flush()
        offset = stream.tell()
        _start_writeback(stream.fileno())  # the final fsync then waits for half as much
        if self.meanwhile is not None:
            self.meanwhile()
        graph.paint_boxes_from(svg, rect, 1.0, state, self._cut(offset, lower > 0))
        try:
            written, ids = self.fork.result()
        except ForkFailed:
            written, ids = 0, None
        mine = svg.item_ids - before
        if ids is None or not ids.isdisjoint(mine):  # the whole upper half, here
            svg.item_ids.difference_update(mine - ours)
            del parts[lower:]
            graph.paint_upper(svg, rect, 1.0, state)
            written = 0
        stream.seek(offset + written)
        stream.truncate()
        if len(parts) > lower:
            joined = "\n".join(parts[lower:]).encode()
            stream.write(b"\n" + joined if lower or written else joined)
        stream.write(self.tail.encode())

    def _start(self, fd: int, start: int, before: set[str]) -> Forked[tuple[int, set[str]]]:
        """The fork: it paints the upper half, stops where asked, and writes its part at
        the offset the ask brings; its result is how many bytes, and its item ids."""
        svg, graph = self.svg, self.graph
        boxes = len(graph.index.box_indices_in(self.rect))
        asked, self.ask = os.pipe()  # this process -> fork: offset, whether parts precede
        self.told, told = os.pipe()  # fork -> this process: the first box it leaves
        where: list[tuple[int, bool]] = []
        cut = [boxes]
        first_box: list[float] = []  # when the fork began its boxes

        def receive() -> None:
            answer = _read_exactly(asked, 9)
            where.append((int.from_bytes(answer[:8], "little"), answer[8:] == b"\1"))

        def until(done: int) -> int:  # every BOX_RUN boxes
            now = time.perf_counter()
            if not first_box:
                first_box.append(now)
            if not where and select.select([asked], [], [], 0)[0]:
                receive()
                box_s = (now - first_box[0]) / done if done else 0.0
                behind = sum(map(len, svg.parts[start:])) / WRITE_RATE  # then due here
                cut[0] = done + _share(boxes - done, behind, box_s)
                os.write(told, cut[0].to_bytes(8, "little"))
            return cut[0]

        def upper() -> tuple[int, set[str]]:
            graph.paint_upper(svg, self.rect, 1.0, self.state, until=until)
            if not where:  # done before the ask: all boxes painted here
                receive()
                os.write(told, boxes.to_bytes(8, "little"))
            offset, after = where[0]
            data = "\n".join(svg.parts[start:]).encode()
            if data and after:
                data = b"\n" + data
            view = memoryview(data)
            while view:
                view = view[os.pwrite(fd, view, offset + len(data) - len(view)):]
            _start_writeback(fd)  # under way before this process' final fsync
            return len(data), svg.item_ids - before

        fork = Forked(upper)
        for end in (asked, told):
            os.close(end)  # the fork's ends
        return fork

    def _cut(self, offset: int, after: bool) -> int:
        """Tell the fork where its part goes and to stop; the first box it leaves."""
        with contextlib.suppress(OSError):  # the fork has ended: it failed
            os.write(self.ask, offset.to_bytes(8, "little") + (b"\1" if after else b"\0"))
        try:
            return int.from_bytes(_read_exactly(self.told, 8), "little")
        except EOFError:  # no answer: the fork failed, and write paints its half here
            return 1 << 62

    def cancel(self) -> None:
        """Stop the fork if the file was not written; close the pipes."""
        if self.fork is not None:
            self.fork.cancel()
        for fd in (self.ask, self.told):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ask = self.told = -1


# Characters a second the fork joins, encodes and writes its part at, once it is done
# (BERT-96: 5.3 MB in 16 ms): a cost the paint's split has to leave room for.
WRITE_RATE = 330e6


def _share(left: int, behind: float, box_s: float) -> int:
    """How many of the ``left`` boxes the fork paints: as many as leave both processes
    done at once, when the fork has ``behind`` seconds of its own to add after its last
    box and paints one in ``box_s`` (0: not known yet, half each)."""
    if box_s <= 0:
        return left // 2
    return max(0, min(left, int((left - behind / box_s) / 2)))


def _start_writeback(fd: int) -> None:
    """Have what was written so far go to disk without waiting for it (Linux starts the
    writeback of dirty pages at this advice; an fsync here stalled the paint 12 ms)."""
    if hasattr(os, "posix_fadvise"):
        with contextlib.suppress(OSError):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def _read_exactly(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            raise EOFError
        data += more
    return data
