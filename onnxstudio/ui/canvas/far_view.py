"""Pictures of a large graph at far zooms, painted on a worker and scaled onto the screen.

Zoomed out on the expanded dag100k every box and edge is under a pixel, yet each frame
handed all 100k rectangles and 147k lines to Qt again: 30-45 ms of the GUI thread per
frame. A big layout (``MIN_BOXES``) gets pictures of the whole graph at the coarse level
of detail instead, one per zoom a factor of two apart, from the largest that fits
``MAX_PIXELS`` (and ``COARSE_SCALE``) down to the smallest zoom the view allows. A far
frame then draws the part of the picture nearest its zoom (scaled by at most √2) and the
marks (selection, hover, search matches) over it. The pictures follow the painter, its
theme and the overlay, like the minimap's image; until they are painted (or for another
look), frames paint the graph as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtGui import QImage, QPainter

from onnxstudio.layout.types import Layout
from onnxstudio.render.overlay import Overlay
from onnxstudio.render.qt_surface import QtSurface
from onnxstudio.render.scene_painter import COARSE_SCALE, GraphPainter, PaintState
from onnxstudio.ui.tasks import TaskRunner, next_turn

MIN_BOXES = 20_000  # smaller graphs paint a far frame directly within a few ms
MAX_PIXELS = 2 << 20  # the largest picture's pixels (8 MB); each next one a quarter
MAX_SIDE = 16_384
PAD_PX = 3  # around the graph: strokes reach over its edge

Level = tuple[float, QImage]  # (zoom, the whole graph painted at it)


def level_scales(layout: Layout, lowest: float) -> list[float]:
    """The zooms to paint ``layout`` at, largest first, halving down to ``lowest``."""
    w, h = max(layout.width, 1.0), max(layout.height, 1.0)
    top = min(COARSE_SCALE * 0.999, math.sqrt(MAX_PIXELS / (w * h)), MAX_SIDE / max(w, h))
    scales = [top]
    while scales[-1] / math.sqrt(2) > lowest and len(scales) < 16:
        scales.append(scales[-1] / 2)
    return scales


def render_levels(graph: GraphPainter, scales: list[float], overlay: Overlay | None,
                  cancelled: Callable[[], bool] = lambda: False) -> list[Level]:
    """The pictures (transparent around the graph); safe off the GUI thread."""
    layout = graph.layout
    levels = []
    for s in scales:
        if cancelled():
            break
        image = QImage(math.ceil(layout.width * s) + 2 * PAD_PX,
                       math.ceil(layout.height * s) + 2 * PAD_PX,
                       QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        try:
            painter.translate(PAD_PX, PAD_PX)
            painter.scale(s, s)
            graph.paint(QtSurface(painter), None, s, PaintState(overlay=overlay))
        finally:
            painter.end()
        levels.append((s, image))
    return levels


class FarView(QObject):
    """The pictures of one canvas' graph; ``draw`` uses them when they fit a frame.
    ``arrived`` is emitted when new pictures are there to draw."""

    arrived = Signal()

    def __init__(self, parent: QObject, graph: Callable[[], GraphPainter | None],
                 overlay: Callable[[], Overlay | None], lowest: Callable[[], float]) -> None:
        """``graph``, ``overlay``: what the canvas shows now; ``lowest``: its smallest zoom."""
        super().__init__(parent)
        self._graph, self._overlay, self._lowest = graph, overlay, lowest
        self._levels: list[Level] = []
        self._made_for: tuple[object, ...] = ()  # (painter, theme, overlay) of _levels
        self._wanted_for: tuple[object, ...] = ()  # what is being painted or queued
        self._renderer = TaskRunner(self)
        self._renderer.finished.connect(self._rendered)
        # While this says so (a model landing), the render waits, as the minimap's does.
        self.defer_while: Callable[[], bool] = lambda: False

    def _now(self) -> tuple[object, ...]:
        graph = self._graph()
        return (graph, graph.theme if graph else None, self._overlay())

    @staticmethod
    def _same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))

    def ready(self) -> bool:
        """Whether pictures of what the canvas shows now are painted."""
        return bool(self._levels) and self._same(self._made_for, self._now())

    def pending(self) -> bool:
        """Whether pictures are queued or being painted for what the canvas shows."""
        return bool(self._wanted_for) and not self.ready()

    def changed(self) -> None:
        """The painter, theme or overlay changed: paint new pictures (a turn later, so
        a landing layout's other work on the GUI thread goes first)."""
        graph = self._graph()
        if graph is None or len(graph.layout.boxes) < MIN_BOXES:
            self._renderer.cancel()
            self._levels, self._made_for, self._wanted_for = [], (), ()
            return
        if self.ready() or self._same(self._wanted_for, self._now()):
            return
        self._wanted_for = self._now()
        next_turn(self, self._render)

    def _render(self) -> None:
        if self.defer_while():
            next_turn(self, self._render)
            return
        wanted = self._now()
        if not self._same(wanted, self._wanted_for) or self.ready():
            return  # changed again meanwhile: that change queued its own turn
        graph, _theme, overlay = wanted
        assert isinstance(graph, GraphPainter)
        scales = level_scales(graph.layout, self._lowest())
        # Qt objects per batch: see Minimap._render for why the collector stays quiet
        self._renderer.start(lambda context: (
            render_levels(graph, scales, overlay, context.cancelled), wanted),  # type: ignore[arg-type]
            quiet_gc=True)

    def _rendered(self, result: tuple[list[Level], tuple[object, ...]]) -> None:
        levels, made_for = result
        if self._same(made_for, self._now()) and levels:
            self._levels, self._made_for = levels, made_for
            self.arrived.emit()

    def draw(self, painter: QPainter, rect: QRectF, scale: float) -> bool:
        """Draw the picture nearest ``scale`` over ``rect`` (scene units); False (and
        nothing drawn) when none fits: not painted yet, or a zoom above the largest."""
        if not self.ready():
            return False
        dpr = painter.device().devicePixelRatioF()
        wanted = scale * dpr
        if wanted > self._levels[0][0] * math.sqrt(2) or scale >= COARSE_SCALE:
            return False
        s, image = min(self._levels, key=lambda level: abs(math.log(level[0] / wanted)))
        source = QRectF(rect.x() * s + PAD_PX, rect.y() * s + PAD_PX,
                        rect.width() * s, rect.height() * s)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        painter.drawImage(rect, image, source)
        painter.restore()
        return True
