"""The canvas' drawing surface: QtSurface plus what only a screen may reuse between frames.

A frame at a readable zoom spent most of its time rasterising the same few looks again
(antialiased rounded rectangles: ~30 µs each, four per operator box): the expanded
dag100k has 10 distinct box looks among 100k boxes, BERT-96 41 among 6k. So each look
is drawn once per zoom into a pixmap (``stamp``) and blitted after that, and the
straight edges (131k of dag100k's 147k) go to Qt in one ``drawLines`` call per stroke
instead of a path each. Exports keep the plain QtSurface, so files stay as they were.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRect, Qt
from PySide6.QtGui import QPainter, QPen, QPicture, QPixmap

from onnxstudio.render.drawing import EdgeDraw, Point, Stroke
from onnxstudio.render.qt_surface import Paths, QtSurface, draw_rows

MARGIN_PX = 2  # device pixels around a look's recorded bounds (antialiasing)
MAX_STAMP_PX = 400 * 300  # a look larger than this on screen is drawn in place
MAX_STAMP_BYTES = 64 << 20  # all pixmaps of one zoom; over it they are dropped
PHASES = 2  # sub-pixel positions per axis a look is drawn at (error <= 1/4 px)


class ScreenSurface(QtSurface):
    """QtSurface for the canvas: box looks and group titles as pixmaps per zoom,
    straight edges batched. ``stamps_drawn`` counts the looks drawn into pixmaps (a pan
    at the same zoom draws none)."""

    keeps_looks = True

    def __init__(self, painter: QPainter, paths: Paths | None = None) -> None:
        # a look's bounds at zoom 1 relative to its origin (None: nothing drawn)
        self._bounds: dict[Hashable, QRect | None] = {}
        self._stamps: dict[Hashable, QPixmap | None] = {}  # (key, phase) -> pixmap
        self._stamp_bytes = 0
        self._zoom: tuple[float, float] = (0.0, 0.0)  # (scale, dpr) of the pixmaps
        self.stamps_drawn = 0
        self._flat: dict[Stroke, QPen] = {}
        super().__init__(painter, paths)

    def bind(self, painter: QPainter) -> None:
        super().bind(painter)
        t = painter.worldTransform()
        # scale and offset to device pixels: the canvas' transform is a zoom and a scroll
        dpr = painter.device().devicePixelRatioF()
        self._to_device = (t.m11() * dpr, t.dx() * dpr, t.m22() * dpr, t.dy() * dpr,
                           not (t.m12() or t.m21()))
        zoom = (t.m11(), dpr)
        if zoom != self._zoom:
            self.forget_looks()
            self._zoom = zoom

    def forget_looks(self) -> None:
        """Drop the pixmaps (a new zoom or theme); the looks' bounds stay valid."""
        self._stamps.clear()
        self._stamp_bytes = 0

    # -- looks --------------------------------------------------------------------------

    def stamp(self, key: Hashable, origin: Point, draw: Callable[[], None]) -> None:
        """Blit the look's pixmap for this zoom and sub-pixel phase, drawing it first
        when new (or in place when it would be too large)."""
        p = self.p
        sx, ox, sy, oy, upright = self._to_device
        if not upright:  # rotated or sheared: never on the canvas
            draw()
            return
        scale, dpr = self._zoom
        dx = sx * origin[0] + ox
        dy = sy * origin[1] + oy
        ix, iy = math.floor(dx), math.floor(dy)
        phase = (round((dx - ix) * PHASES), round((dy - iy) * PHASES))
        stamps = self._stamps
        pixmap = stamps[(key, phase)] if (key, phase) in stamps else \
            self._draw_stamp(key, origin, phase, draw)
        if pixmap is None:
            draw()
            return
        p.save()
        p.resetTransform()
        offset = self._bounds[key]
        assert offset is not None
        p.drawPixmap(QPointF((ix + math.floor(offset.x() * scale * dpr) - MARGIN_PX) / dpr,
                             (iy + math.floor(offset.y() * scale * dpr) - MARGIN_PX) / dpr),
                     pixmap)
        p.restore()

    def _draw_stamp(self, key: Hashable, origin: Point, phase: tuple[int, int],
                    draw: Callable[[], None]) -> QPixmap | None:
        """The look drawn into a pixmap at this zoom and phase, kept; None (kept too)
        when it is too large or empty."""
        screen = self.p
        if key in self._bounds:
            bounds = self._bounds[key]
        else:
            bounds = self._bounds[key] = self._record(origin, draw, screen)
        pixmap = None
        scale, dpr = self._zoom
        if bounds is not None:
            x0 = math.floor(bounds.x() * scale * dpr)
            y0 = math.floor(bounds.y() * scale * dpr)
            w = math.ceil((bounds.x() + bounds.width()) * scale * dpr) - x0 + 2 * MARGIN_PX
            h = math.ceil((bounds.y() + bounds.height()) * scale * dpr) - y0 + 2 * MARGIN_PX
            if w * h <= MAX_STAMP_PX:
                pixmap = QPixmap(w, h)
                pixmap.fill(Qt.GlobalColor.transparent)
                painter = QPainter(pixmap)
                painter.translate(MARGIN_PX - x0 + phase[0] / PHASES,
                                  MARGIN_PX - y0 + phase[1] / PHASES)
                painter.scale(scale * dpr, scale * dpr)
                painter.translate(-origin[0], -origin[1])
                self.bind_only(painter)
                try:
                    draw()
                finally:
                    painter.end()
                    self.bind_only(screen)
                pixmap.setDevicePixelRatio(dpr)
                self.stamps_drawn += 1
                self._stamp_bytes += w * h * 4
                if self._stamp_bytes > MAX_STAMP_BYTES:
                    self.forget_looks()
                    self._stamp_bytes = w * h * 4
        self._stamps[(key, phase)] = pixmap
        return pixmap

    def _record(self, origin: Point, draw: Callable[[], None], screen: QPainter
                ) -> QRect | None:
        """The look's bounds at zoom 1, relative to ``origin`` (drawn into a QPicture)."""
        picture = QPicture()
        painter = QPainter(picture)
        painter.translate(-origin[0], -origin[1])
        self.bind_only(painter)
        try:
            draw()
        finally:
            painter.end()
            self.bind_only(screen)
        bounds = picture.boundingRect()
        return None if bounds.isEmpty() else bounds

    def bind_only(self, painter: QPainter) -> None:
        """Draw on ``painter`` for a moment, keeping this surface's zoom and pixmaps."""
        QtSurface.bind(self, painter)

    # -- edges --------------------------------------------------------------------------

    def straight_lines(self, segments: np.ndarray, stroke: Stroke) -> None:
        """Straight routes (rows of x0, y0, x1, y1) in one call, with flat caps."""
        self._hold_pen(self._flat_pen(stroke))
        draw_rows(self.p.drawLines, QLineF, segments)

    def _flat_pen(self, stroke: Stroke) -> QPen:
        """``stroke``'s pen with flat caps, for straight routes: Qt strokes a 1.2 px line
        with round caps ten times slower (3 ms per 100 lines), and no cap shows here (a
        route starts under its source box and ends under its arrowhead)."""
        pen = self._flat.get(stroke)
        if pen is None:
            pen = self._flat[stroke] = QPen(self._pen(stroke))
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        return pen

    def edges(self, batch: Sequence[EdgeDraw]) -> None:
        """Per stroke, in the order strokes first appear (the painter puts selected and
        hovered edges last, to be drawn over the rest): the straight routes in one
        ``drawLines`` call, the curved ones as paths, then their arrowheads."""
        groups: dict[Stroke, tuple[list[tuple[float, float, float, float]],
                                   list[EdgeDraw], list[EdgeDraw]]] = {}
        for draw in batch:
            start, route, stroke = draw[2], draw[3], draw[4]
            group = groups.get(stroke)
            if group is None:
                group = groups[stroke] = ([], [], [])
            group[2].append(draw)
            if len(route) == 1 and not stroke.dash:
                c1, c2, end = route[0]
                if c1 == start and c2 == end:
                    group[0].append((start[0], start[1], end[0], end[1]))
                    continue
            group[1].append(draw)
        for stroke, (lines, curved, every) in groups.items():
            if lines:
                self.straight_lines(np.asarray(lines, dtype=np.float64), stroke)
            for draw in curved:
                self.path(draw[2], draw[3], stroke)
            for draw in every:
                self.arrowhead(draw[5], draw[6])
