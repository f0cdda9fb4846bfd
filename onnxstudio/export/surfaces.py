"""A surface wrapper that watches a drawing for progress and cancel.

``WatchSurface`` lets a single long ``GraphPainter.paint`` call (a 100k-node PDF) report
progress and stop on Cancel: it counts drawn items and raises ExportCancelled from
inside the paint, which unwinds to the atomic writer and leaves no file behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from onnxstudio.concurrency.gil_runs import let_others_run
from onnxstudio.export.options import CancelFn, ExportCancelled, ProgressFn
from onnxstudio.render.drawing import Anchor, Cubic, EdgeDraw, Font, Point, Stroke, Surface


class WatchSurface(Surface):
    """Delegates to ``inner``; every ``every`` items it reports progress and polls cancel.

    Progress is ``base + items`` out of ``total`` work units, so several paints (strips,
    pages) add up to one bar.
    """

    def __init__(self, inner: Surface, progress: ProgressFn | None, cancel: CancelFn | None,
                 base: int = 0, total: int = 1, every: int = 200) -> None:
        self.inner = inner
        self.progress, self.cancel = progress, cancel
        self.base, self.total, self.every = base, max(total, 1), every
        self.items = 0
        # Bind the primitives straight to the inner surface: no extra call per shape.
        self.rect = inner.rect  # type: ignore[method-assign]
        self.rounded_rect = inner.rounded_rect  # type: ignore[method-assign]
        self.path = inner.path  # type: ignore[method-assign]
        self.polygon = inner.polygon  # type: ignore[method-assign]
        self.text = inner.text  # type: ignore[method-assign]
        self.rects = inner.rects  # type: ignore[method-assign]
        self.lines = inner.lines  # type: ignore[method-assign]
        self.end_item = inner.end_item  # type: ignore[method-assign]
        self.stamp = inner.stamp  # type: ignore[method-assign]
        self.keeps_looks = inner.keeps_looks

    def check(self) -> None:
        if self.cancel is not None and self.cancel():
            raise ExportCancelled()
        if self.progress is not None:
            self.progress(min(self.base + self.items, self.total - 1), self.total)
        let_others_run()  # a paint through Qt (PNG, PDF) on a worker: see gil_runs

    def begin_item(self, item_id: str, kind: str, name: str = "", op_type: str = "") -> None:
        self.items += 1
        if self.items % self.every == 0:
            self.check()
        self.inner.begin_item(item_id, kind, name, op_type)

    def end_item(self) -> None:
        self.inner.end_item()

    def edges(self, batch: Sequence[EdgeDraw]) -> None:
        """Handed on in runs of ``every`` edges, checked between runs."""
        for start in range(0, len(batch), self.every):
            run = batch[start:start + self.every]
            self.items += len(run)
            self.check()
            self.inner.edges(run)

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None,
             stroke: Stroke | None) -> None:
        self.inner.rect(x, y, w, h, fill, stroke)

    def rounded_rect(self, x: float, y: float, w: float, h: float, radius: float,
                     fill: str | None, stroke: Stroke | None) -> None:
        self.inner.rounded_rect(x, y, w, h, radius, fill, stroke)

    def path(self, start: Point, segments: Sequence[Cubic], stroke: Stroke) -> None:
        self.inner.path(start, segments, stroke)

    def polygon(self, points: Sequence[Point], fill: str, stroke: Stroke | None = None) -> None:
        self.inner.polygon(points, fill, stroke)

    def text(self, x: float, y: float, text: str, font: Font, color: str,
             anchor: Anchor = "start") -> None:
        self.inner.text(x, y, text, font, color, anchor)
