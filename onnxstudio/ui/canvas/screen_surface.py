"""The canvas' drawing surface: QtSurface plus what only a screen may leave out or batch.

A frame of the expanded graphs at a readable zoom spent its time in Qt stroking: a
1.2 px edge with round caps strokes ten times slower than with flat ones (3 ms per 100
lines). So straight routes (131k of dag100k's 147k edges) go to Qt in one ``drawLines``
call per stroke with flat caps (no cap shows: a route starts under its source box and
ends under its arrowhead), and a group frame larger than the painted area is cut to it
(Qt fills and strokes the whole of it). Exports keep the plain QtSurface, so files stay
as they were.

On a layout of 20,000+ boxes each look (box, edge label, group title) is also drawn once
per zoom into a pixmap and blitted (``stamp``); on smaller ones that cost more than it
saved, measured on the tour of ``tests/benchmarks/frames.py`` (BERT-96's frame CPU p50
5.7 -> 7.8 ms, a first view's first paint 1.3-1.5x slower). Long routes drawn only where
their pieces meet the painted area were dropped: no gain on BERT-96's 1:1 frames, 2.5 ms
more on its first paint.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRect, Qt
from PySide6.QtGui import QPainter, QPen, QPicture, QPixmap

from onnxstudio.render.drawing import EdgeDraw, Point, Stroke
from onnxstudio.render.qt_surface import Paths, QtSurface, draw_rows

CUT_MARGIN_PX = 16.0  # shapes are cut this far outside the painted area (and 16 units)
STAMP_MIN_BOXES = 20_000  # layouts this big have their looks stamped (see ScreenSurface)
MARGIN_PX = 2  # device pixels around a look's recorded bounds (antialiasing)
MAX_STAMP_PX = 400 * 300  # a look larger than this on screen is drawn in place
MAX_STAMP_BYTES = 64 << 20  # all pixmaps of one zoom; over it they are dropped
MAX_LOOKS = 20_000  # looks whose bounds are remembered
PHASES = 2  # sub-pixel positions per axis a look is drawn at (error <= 1/4 px)


class ScreenSurface(QtSurface):
    """QtSurface for the canvas: straight edges batched with flat caps, big frames cut
    to the area :meth:`show` names, a big layout's looks stamped. ``stamps_drawn``
    counts the looks drawn into pixmaps (a pan at the same zoom draws none)."""

    keeps_looks = False  # True (set per paint by the canvas) for a layout of
    # STAMP_MIN_BOXES or more: each look (box, label, title) is drawn once per zoom into
    # a pixmap and blitted (dag100k has 10 box looks among 100k boxes: its 1:1 frames
    # 10 -> 7 ms); on smaller graphs recording looks cost more than it saved

    def __init__(self, painter: QPainter, paths: Paths | None = None) -> None:
        self._flat: dict[Stroke, QPen] = {}
        self._area: tuple[float, float, float, float] | None = None  # see show()
        # a look's bounds at zoom 1 relative to its origin (None: nothing drawn)
        self._bounds: dict[Hashable, QRect | None] = {}
        self._stamps: dict[Hashable, QPixmap | None] = {}  # (key, phase) -> pixmap
        self._stamp_bytes = 0
        self._zoom: tuple[float, float] = (0.0, 0.0)  # (scale, dpr) of the pixmaps
        self.stamps_drawn = 0
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
        bounds = self._bounds.get(key)
        if pixmap is None or bounds is None:
            draw()
            return
        p = self.p
        p.save()
        p.resetTransform()
        p.drawPixmap(QPointF((ix + math.floor(bounds.x() * scale * dpr) - MARGIN_PX) / dpr,
                             (iy + math.floor(bounds.y() * scale * dpr) - MARGIN_PX) / dpr),
                     pixmap)
        p.restore()

    def _draw_stamp(self, key: Hashable, origin: Point, phase: tuple[int, int],
                    draw: Callable[[], None]) -> QPixmap | None:
        """The look drawn into a pixmap at this zoom and phase, kept; None (kept too)
        when it is too large or empty."""
        if key in self._bounds:
            bounds = self._bounds[key]
        else:
            if len(self._bounds) >= MAX_LOOKS:
                self._bounds.clear()
            bounds = self._bounds[key] = self._record(origin, draw)
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
                self._alone(painter, draw)
                pixmap.setDevicePixelRatio(dpr)
                self.stamps_drawn += 1
                self._stamp_bytes += w * h * 4
                if self._stamp_bytes > MAX_STAMP_BYTES:
                    self.forget_looks()
                    self._stamp_bytes = w * h * 4
        self._stamps[(key, phase)] = pixmap
        return pixmap

    def _record(self, origin: Point, draw: Callable[[], None]) -> QRect | None:
        """The look's bounds at zoom 1, relative to ``origin`` (drawn into a QPicture)."""
        picture = QPicture()
        painter = QPainter(picture)
        painter.translate(-origin[0], -origin[1])
        self._alone(painter, draw)
        bounds = picture.boundingRect()
        return None if bounds.isEmpty() else bounds

    def _alone(self, painter: QPainter, draw: Callable[[], None]) -> None:
        """``draw()`` on ``painter`` (then ended), uncut; then back to the screen."""
        screen, area, self._area = self.p, self._area, None
        QtSurface.bind(self, painter)
        try:
            draw()
        finally:
            painter.end()
            QtSurface.bind(self, screen)
            self._area = area

    def show(self, area: tuple[float, float, float, float]) -> None:
        """The scene area (x, y, w, h) the paint of the bound painter exposes."""
        x, y, w, h = area
        scale = abs(self.p.worldTransform().m11()) or 1.0
        m = CUT_MARGIN_PX / scale + 16.0  # beyond any corner and stroke
        self._area = (x - m, y - m, x + w + m, y + h + m)

    # -- cut to the painted area ---------------------------------------------------------

    def rounded_rect(self, x: float, y: float, w: float, h: float, radius: float,
                     fill: str | None, stroke: Stroke | None) -> None:
        area = self._area
        if area is not None:
            ax0, ay0, ax1, ay1 = area
            if x < ax0 or y < ay0 or x + w > ax1 or y + h > ay1:  # cut edges: out of sight
                x0, y0, x1, y1 = max(x, ax0), max(y, ay0), min(x + w, ax1), min(y + h, ay1)
                if x1 <= x0 or y1 <= y0:
                    return
                x, y, w, h = x0, y0, x1 - x0, y1 - y0
        super().rounded_rect(x, y, w, h, radius, fill, stroke)

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
