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
from PySide6.QtGui import QPainter, QPainterPath, QPen, QPicture, QPixmap

from onnxstudio.render.drawing import Cubic, EdgeDraw, Point, Stroke
from onnxstudio.render.qt_surface import Paths, QtSurface, draw_rows

MARGIN_PX = 2  # device pixels around a look's recorded bounds (antialiasing)
CUT_MARGIN_PX = 16.0  # shapes are cut this far outside the painted area (and 16 units)
CUT_SEGMENTS = 8  # routes with this many pieces are cut to the painted area
MAX_CUT_ROUTES = 4096
MAX_STAMP_PX = 400 * 300  # a look larger than this on screen is drawn in place
MAX_STAMP_BYTES = 64 << 20  # all pixmaps of one zoom; over it they are dropped
PHASES = 2  # sub-pixel positions per axis a look is drawn at (error <= 1/4 px)


def _pieces(start: Point, segments: Sequence[Cubic], shown: list[int]) -> QPainterPath:
    """The path of the pieces ``shown`` (ascending) of a route, a sub-path per run."""
    path = QPainterPath()
    last = -2
    for i in shown:
        begin = start if i == 0 else segments[i - 1][2]
        if i != last + 1:
            path.moveTo(*begin)
        c1, c2, end = segments[i]
        if c1 == begin and c2 == end:
            path.lineTo(*end)
        else:
            path.cubicTo(c1[0], c1[1], c2[0], c2[1], end[0], end[1])
        last = i
    return path


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
        self._area: tuple[float, float, float, float] | None = None  # see show()
        # long routes' pieces' bounding boxes, by the identity of the route (kept with it)
        self._pieces: dict[int, tuple[Sequence[Cubic], np.ndarray]] = {}
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

    def show(self, area: tuple[float, float, float, float]) -> None:
        """The scene area (x, y, w, h) this paint exposes: a long route is drawn only
        where its pieces meet it, a big frame cut to it (Qt strokes a whole path: one
        of BERT-96's skip connections spans its 362k px height, 80 µs a frame each)."""
        x, y, w, h = area
        m = CUT_MARGIN_PX / max(self._zoom[0], 1e-9) + 16.0  # beyond corner and stroke
        self._area = (x - m, y - m, x + w + m, y + h + m)

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
                self._alone(painter, draw, screen)
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
        self._alone(painter, draw, screen)
        bounds = picture.boundingRect()
        return None if bounds.isEmpty() else bounds

    def _alone(self, painter: QPainter, draw: Callable[[], None], screen: QPainter) -> None:
        """``draw()`` on ``painter`` (then ended), whole; then back to ``screen``."""
        area, self._area = self._area, None
        QtSurface.bind(self, painter)
        try:
            draw()
        finally:
            painter.end()
            QtSurface.bind(self, screen)
            self._area = area

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

    def path(self, start: Point, segments: Sequence[Cubic], stroke: Stroke) -> None:
        area = self._area
        if area is not None and len(segments) >= CUT_SEGMENTS:
            boxes = self._piece_boxes(start, segments)
            ax0, ay0, ax1, ay1 = area
            seen = ((boxes[:, 0] <= ax1) & (boxes[:, 2] >= ax0)
                    & (boxes[:, 1] <= ay1) & (boxes[:, 3] >= ay0))
            if not seen.all():
                if seen.any():
                    self._hold(self._pen(stroke), self._no_brush)
                    self.p.drawPath(_pieces(start, segments, np.flatnonzero(seen).tolist()))
                return
        super().path(start, segments, stroke)

    def _piece_boxes(self, start: Point, segments: Sequence[Cubic]) -> np.ndarray:
        """Each piece's bounding box (x0, y0, x1, y1) of its four control points."""
        hit = self._pieces.get(id(segments))
        if hit is not None and hit[0] is segments:
            return hit[1]
        pts = np.asarray(segments, dtype=np.float64)  # (n, 3, 2): c1, c2, end
        starts = np.vstack([np.asarray(start, dtype=np.float64)[None], pts[:-1, 2]])
        every = np.concatenate([starts[:, None], pts], axis=1)  # (n, 4, 2)
        boxes = np.hstack([every.min(axis=1), every.max(axis=1)])
        if len(self._pieces) >= MAX_CUT_ROUTES:
            self._pieces.clear()
        self._pieces[id(segments)] = (segments, boxes)  # kept: its id stays unique
        return boxes

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
