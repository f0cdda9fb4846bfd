"""Minimap: a corner overview of the whole graph with the visible area outlined.

The overview is painted once per layout/theme into a cached image at coarse detail (no
text), so moving the view only redraws the outline. Click or drag to move the view.
It hides itself while the whole graph already fits in the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from onnxstudio.render.qt_surface import QtSurface, qcolor
from onnxstudio.render.scene_painter import PaintState

if TYPE_CHECKING:
    from onnxstudio.ui.canvas.graph_view import GraphView

MAX_SIZE = QSize(220, 260)
CORNER_MARGIN = 12
INNER_PAD = 6


class Minimap(QWidget):
    """Overlay in the view's bottom-right corner; a child of the GraphView itself (not
    of its viewport, whose scrolling would drag children along)."""

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self._view = view
        self._image: QImage | None = None
        self._dirty = True
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self.hide()

    # -- called by the view -------------------------------------------------------------

    def layout_changed(self) -> None:
        self._dirty = True
        self.reposition()
        self.view_changed()

    def view_changed(self) -> None:
        layout = self._view.graph_layout()
        wanted = layout is not None and not self._whole_graph_visible()
        if wanted != self.isVisible():
            self.setVisible(wanted)
            if wanted:
                self.raise_()
        if wanted:
            self.update()

    def reposition(self) -> None:
        layout = self._view.graph_layout()
        if layout is None:
            return
        w, h = max(layout.width, 1.0), max(layout.height, 1.0)
        s = min((MAX_SIZE.width() - 2 * INNER_PAD) / w, (MAX_SIZE.height() - 2 * INNER_PAD) / h)
        size = QSize(max(40, int(w * s) + 2 * INNER_PAD), max(40, int(h * s) + 2 * INNER_PAD))
        if size != self.size():
            self.resize(size)
            self._dirty = True
        vp = self._view.viewport().geometry()
        self.move(
            vp.right() - self.width() - CORNER_MARGIN, vp.bottom() - self.height() - CORNER_MARGIN
        )

    # -- geometry -----------------------------------------------------------------------

    def _whole_graph_visible(self) -> bool:
        layout = self._view.graph_layout()
        if layout is None:
            return True
        visible = self._view.visible_scene_rect()
        return visible.contains(QRectF(0, 0, layout.width, layout.height))

    def _scale(self) -> float:
        layout = self._view.graph_layout()
        if layout is None:
            return 1.0
        inner_w = self.width() - 2 * INNER_PAD
        inner_h = self.height() - 2 * INNER_PAD
        return min(inner_w / max(layout.width, 1.0), inner_h / max(layout.height, 1.0))

    def _offset(self) -> QPointF:
        layout = self._view.graph_layout()
        s = self._scale()
        if layout is None:
            return QPointF(INNER_PAD, INNER_PAD)
        return QPointF(
            (self.width() - layout.width * s) / 2, (self.height() - layout.height * s) / 2
        )

    def scene_point(self, pos: QPointF) -> QPointF:
        """Scene coordinates of a point on the minimap."""
        s = self._scale()
        off = self._offset()
        return QPointF((pos.x() - off.x()) / s, (pos.y() - off.y()) / s)

    # -- painting -----------------------------------------------------------------------

    def _render(self) -> QImage:
        dpr = self.devicePixelRatioF()
        image = QImage(
            int(self.width() * dpr),
            int(self.height() * dpr),
            QImage.Format.Format_ARGB32_Premultiplied,
        )
        image.setDevicePixelRatio(dpr)
        image.fill(Qt.GlobalColor.transparent)
        graph = self._view.painter()
        if graph is None:
            return image
        painter = QPainter(image)
        try:
            off = self._offset()
            s = self._scale()
            painter.translate(off)
            painter.scale(s, s)
            # The overview shows the heatmap too: where the hot spots are in a big graph.
            graph.paint(QtSurface(painter), None, s, PaintState(overlay=self._view.overlay()))
        finally:
            painter.end()
        return image

    def paintEvent(self, event: QPaintEvent) -> None:
        theme = self._view.theme()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        frame = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        bg = QColor(qcolor(theme.minimap_bg))
        bg.setAlpha(235)
        p.setPen(QPen(qcolor(theme.group_border), 1.0))
        p.setBrush(bg)
        p.drawRoundedRect(frame, 5, 5)
        if self._dirty or self._image is None:
            self._image = self._render()
            self._dirty = False
        p.drawImage(0, 0, self._image)
        # The visible area.
        visible = self._view.visible_scene_rect()
        s = self._scale()
        off = self._offset()
        r = QRectF(
            off.x() + visible.x() * s,
            off.y() + visible.y() * s,
            visible.width() * s,
            visible.height() * s,
        ).intersected(frame)
        colour = QColor(qcolor(theme.minimap_viewport))
        fill = QColor(colour)
        fill.setAlpha(40)
        p.setPen(QPen(colour, 1.5))
        p.setBrush(fill)
        p.drawRect(r)
        p.end()

    # -- interaction --------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._move_view(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_view(event.position())
        event.accept()

    def _move_view(self, pos: QPointF) -> None:
        self._view.centerOn(self.scene_point(pos))
