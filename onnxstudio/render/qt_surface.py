"""QPainter backend of the drawing surface: the screen, PNG (QImage) and PDF (QPdfWriter).

Pens, brushes, fonts and colours are cached per style value, because the canvas paints
thousands of items per frame and building Qt objects dominates otherwise.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import shiboken6
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)

from onnxstudio.concurrency.gil_runs import let_others_run
from onnxstudio.render.drawing import (
    FONT_FAMILY,
    Anchor,
    Cubic,
    EdgeDraw,
    Font,
    Point,
    Stroke,
    Surface,
)

# Qt's font and colour classes are reentrant, not thread-safe: the canvas paints on the
# GUI thread while exports paint on workers, so each thread keeps caches of its own.
_local = threading.local()


def _cache(name: str) -> dict[Any, Any]:
    cache = getattr(_local, name, None)
    if cache is None:
        cache = {}
        setattr(_local, name, cache)
    return cache


def qcolor(color: str) -> QColor:
    """``"#rrggbb"`` or ``"#rrggbbaa"`` as a QColor (cached per thread)."""
    colors: dict[str, QColor] = _cache("colors")
    c = colors.get(color)
    if c is None:
        c = QColor(color[:7])
        if len(color) == 9:
            c.setAlpha(int(color[7:9], 16))
        colors[color] = c
    return c


def qfont(font: Font) -> tuple[QFont, QFontMetricsF]:
    """A QFont and its metrics for ``font`` (cached per thread)."""
    fonts: dict[Font, tuple[QFont, QFontMetricsF]] = _cache("fonts")
    hit = fonts.get(font)
    if hit is None:
        f = QFont("DejaVu Sans Mono" if font.mono else FONT_FAMILY)
        f.setPixelSize(max(1, round(font.size)))
        f.setBold(font.bold)
        f.setItalic(font.italic)
        f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
        f.setStyleStrategy(QFont.StyleStrategy.PreferAntialias)
        hit = (f, QFontMetricsF(f))
        fonts[font] = hit
    return hit


# Items per Qt draw call. A layout task paints the minimap's overview off the GUI thread
# and holds the GIL for the whole of each call: 40k antialiased lines in one call froze
# the window for 250 ms; in batches the GUI thread gets the GIL between them.
DRAW_BATCH = 1024
CACHED_PATH_SEGMENTS = 8
MAX_CACHED_PATHS = 4096
MAX_CACHED_ARROWS = 16384
YIELD_EVERY = 64  # paths built between two turns of the other threads

Paths = dict[int, tuple[Sequence[Cubic], QPainterPath]]
"""Long routes as built QPainterPaths, by the identity of the segment list the painter
keeps per edge (and the list itself, which keeps that identity unique)."""


def qpath(start: Point, segments: Sequence[Cubic]) -> QPainterPath:
    path = QPainterPath(QPointF(*start))
    for c1, c2, end in segments:
        if c1 == start and c2 == end:
            path.lineTo(*end)
        else:
            path.cubicTo(c1[0], c1[1], c2[0], c2[1], end[0], end[1])
        start = end
    return path


def prebuilt_paths(routes: Sequence[tuple[Point, Sequence[Cubic]]]) -> Paths:
    """The paths of the long ones of ``routes``, built ahead of a first paint: QPainterPath
    is reentrant, so a layout task builds them off the GUI thread (BERT-96: 17k cubics,
    the first paint after an expand spent 40 ms on them)."""
    long = [(start, segs) for start, segs in routes if len(segs) >= CACHED_PATH_SEGMENTS]
    paths: Paths = {}
    for k, (start, segs) in enumerate(long[:MAX_CACHED_PATHS]):
        paths[id(segs)] = (segs, qpath(start, segs))
        if k % YIELD_EVERY == 0:
            let_others_run()
    return paths


class QtSurface(Surface):
    """Draws onto an active QPainter (already transformed to layout units)."""

    def __init__(self, painter: QPainter, paths: Paths | None = None) -> None:
        """``paths``: built ahead (``prebuilt_paths``) for the painter's long routes."""
        self._pens: dict[Stroke, QPen] = {}
        self._brushes: dict[str, QBrush] = {}
        self._no_pen = QPen(Qt.PenStyle.NoPen)
        self._no_brush = QBrush(Qt.BrushStyle.NoBrush)
        # A skip connection past every layer of BERT-96 is a hundred cubics, and the
        # first view has a hundred of them (50 ms per paint): built once, kept here.
        self._paths: Paths = dict(paths) if paths else {}
        self._text_pens: dict[str, QPen] = {}
        # arrowheads by the identity of their point list (kept, so the id stays unique)
        self._arrows: dict[int, tuple[Sequence[Point], QPolygonF]] = {}
        self.bind(painter)

    def add_paths(self, paths: Paths) -> None:
        """More long routes' paths built ahead (``prebuilt_paths``, by a later task)."""
        room = MAX_CACHED_PATHS - len(self._paths)
        self._paths.update(list(paths.items())[:max(0, room)])

    def bind(self, painter: QPainter) -> None:
        """Draw on another (active) painter, keeping the pen and brush caches."""
        self.p = painter
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        # What this painter holds now, as set by this surface: most shapes of a paint
        # share a pen or brush with the one before, and each set is a call into Qt (a
        # third of the calls of a dense view's paint). Whoever else sets them between
        # two of this surface's calls must bind again.
        self._held_pen: QPen | None = None
        self._held_brush: QBrush | None = None
        self._held_font: QFont | None = None

    def _hold_pen(self, pen: QPen) -> None:
        if pen is not self._held_pen:
            self.p.setPen(pen)
            self._held_pen = pen

    def _hold(self, pen: QPen, brush: QBrush) -> None:
        self._hold_pen(pen)
        if brush is not self._held_brush:
            self.p.setBrush(brush)
            self._held_brush = brush

    def _pen(self, stroke: Stroke | None) -> QPen:
        if stroke is None:
            return self._no_pen
        pen = self._pens.get(stroke)
        if pen is None:
            pen = QPen(qcolor(stroke.color), stroke.width)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            if stroke.dash:
                pen.setDashPattern(list(stroke.dash))
            self._pens[stroke] = pen
        return pen

    def _brush(self, fill: str | None) -> QBrush:
        if fill is None:
            return self._no_brush
        b = self._brushes.get(fill)
        if b is None:
            b = QBrush(qcolor(fill))
            self._brushes[fill] = b
        return b

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None, stroke: Stroke | None
             ) -> None:
        self._hold(self._pen(stroke), self._brush(fill))
        self.p.drawRect(QRectF(x, y, w, h))

    def rounded_rect(self, x: float, y: float, w: float, h: float, radius: float, fill: str | None,
                     stroke: Stroke | None) -> None:
        self._hold(self._pen(stroke), self._brush(fill))
        self.p.drawRoundedRect(QRectF(x, y, w, h), radius, radius)

    def path(self, start: Point, segments: Sequence[Cubic], stroke: Stroke) -> None:
        long = len(segments) >= CACHED_PATH_SEGMENTS
        hit = self._paths.get(id(segments)) if long else None
        if hit is not None and hit[0] is segments:
            qp = hit[1]
        else:
            qp = qpath(start, segments)
            if long:
                if len(self._paths) >= MAX_CACHED_PATHS:
                    self._paths.clear()
                self._paths[id(segments)] = (segments, qp)  # kept: its id stays unique
        self._hold(self._pen(stroke), self._no_brush)
        self.p.drawPath(qp)

    def edges(self, batch: Sequence[EdgeDraw]) -> None:
        """What the default draws (the items are nothing to a QPainter), with each
        arrowhead's QPolygonF kept like a long route's path: the painter hands over the
        same point lists every paint, and building the polygons was a tenth of a close
        view's frame (BERT-96 expanded, 1:1)."""
        for _item, _name, start, route, stroke, arrow, fill in batch:
            self.path(start, route, stroke)
            self.arrowhead(arrow, fill)

    def arrowhead(self, arrow: Sequence[Point], fill: str) -> None:
        """An edge's arrowhead, its QPolygonF kept by the identity of ``arrow``."""
        arrows = self._arrows
        hit = arrows.get(id(arrow))
        if hit is None or hit[0] is not arrow:
            if len(arrows) >= MAX_CACHED_ARROWS:
                arrows.clear()
            hit = arrows[id(arrow)] = (arrow, QPolygonF([QPointF(x, y) for x, y in arrow]))
        self._hold(self._no_pen, self._brush(fill))
        self.p.drawPolygon(hit[1])

    def polygon(self, points: Sequence[Point], fill: str, stroke: Stroke | None = None) -> None:
        self._hold(self._pen(stroke), self._brush(fill))
        self.p.drawPolygon(QPolygonF([QPointF(x, y) for x, y in points]))

    def text(
        self, x: float, y: float, text: str, font: Font, color: str, anchor: Anchor = "start"
    ) -> None:
        f, metrics = qfont(font)
        if anchor != "start":
            w = metrics.horizontalAdvance(text)
            x -= w / 2 if anchor == "middle" else w
        if f is not self._held_font:
            self.p.setFont(f)
            self._held_font = f
        pen = self._text_pens.get(color)
        if pen is None:
            pen = self._text_pens[color] = QPen(qcolor(color))
        self._hold_pen(pen)
        self.p.drawText(QPointF(x, y), text)

    def rects(self, boxes: Sequence[tuple[float, float, float, float]] | np.ndarray,
              fill: str | None, stroke: Stroke | None) -> None:
        self._hold(self._pen(stroke), self._brush(fill))
        draw_rows(self.p.drawRects, QRectF, boxes)

    def lines(self, segments: np.ndarray, stroke: Stroke) -> None:
        self._hold_pen(self._pen(stroke))
        draw_rows(self.p.drawLines, QLineF, segments)


def _four_doubles(kind: type[QLineF] | type[QRectF]) -> bool:
    """Whether ``kind`` is four doubles in memory, as numpy's rows of four float64 (qreal
    is a float on builds made so: there, the rows become Qt objects one by one)."""
    probe = kind(1.0, 2.0, 3.0, 4.0)
    held = ctypes.string_at(shiboken6.getCppPointer(probe)[0], 32)
    return held == np.array([1.0, 2.0, 3.0, 4.0]).tobytes()


_AS_ARRAYS = _four_doubles(QLineF) and _four_doubles(QRectF)


def draw_rows(draw: Callable[..., None], kind: type[QLineF] | type[QRectF],
               rows: Sequence[Sequence[float]] | np.ndarray) -> None:
    """``draw(first, count)`` (QPainter.drawLines or drawRects) straight from the memory
    of an array of rows of four numbers, in runs of DRAW_BATCH: no Qt object per shape
    (20k QLineFs made per frame were BERT-96's far zoom's 110 ms)."""
    array = np.ascontiguousarray(rows, dtype=np.float64).reshape(-1, 4)
    if not _AS_ARRAYS:
        shapes = [kind(*row) for row in array.tolist()]
        for i in range(0, len(shapes), DRAW_BATCH):
            draw(shapes[i:i + DRAW_BATCH])
        return
    base, step = array.ctypes.data, array.strides[0]
    for i in range(0, len(array), DRAW_BATCH):
        # a view of the array's memory, not owned: the array outlives the call
        draw(shiboken6.wrapInstance(base + i * step, kind), min(DRAW_BATCH, len(array) - i))
