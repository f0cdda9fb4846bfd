"""The canvas' drawing surface: QtSurface plus what only a screen may leave out or batch.

A frame of the expanded graphs at a readable zoom spent its time in Qt stroking: a
1.2 px edge with round caps strokes ten times slower than with flat ones (3 ms per 100
lines). So straight routes (131k of dag100k's 147k edges) go to Qt in one ``drawLines``
call per stroke with flat caps (no cap shows: a route starts under its source box and
ends under its arrowhead), and a group frame larger than the painted area is cut to it
(Qt fills and strokes the whole of it). Exports keep the plain QtSurface, so files stay
as they were.

Tried and dropped, measured on the tour of ``tests/benchmarks/frames.py``: box looks
drawn once per zoom into pixmaps (recording and playing a look cost more than it saved
on BERT-96, frame CPU p50 5.7 -> 7.8 ms, and made a first view's first paint 1.3-1.5x
slower; dag100k gained ~1-3 ms), and long routes drawn only where their pieces meet the
painted area (no gain on BERT-96's 1:1 frames, 2.5 ms more on its first paint).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QLineF, Qt
from PySide6.QtGui import QPainter, QPen

from onnxstudio.render.drawing import EdgeDraw, Stroke
from onnxstudio.render.qt_surface import Paths, QtSurface, draw_rows

CUT_MARGIN_PX = 16.0  # shapes are cut this far outside the painted area (and 16 units)


class ScreenSurface(QtSurface):
    """QtSurface for the canvas: straight edges batched with flat caps, big frames cut
    to the area :meth:`show` names."""

    def __init__(self, painter: QPainter, paths: Paths | None = None) -> None:
        self._flat: dict[Stroke, QPen] = {}
        self._area: tuple[float, float, float, float] | None = None  # see show()
        super().__init__(painter, paths)

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
