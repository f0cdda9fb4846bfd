"""Minimap: a corner overview of the whole graph with the visible area outlined.

The overview is painted once per layout/theme into a cached image at coarse detail (no
text), so moving the view only redraws the outline. Click or drag to move the view.
It hides itself while the whole graph already fits in the view. Its size follows from the
layout alone, so the layout worker can paint the image (``render_overview``) and the
GUI thread only draws it: on 100k boxes the overview takes ~0.2 s to paint.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Protocol, cast

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from onnxstudio.layout.types import Layout
from onnxstudio.render.overlay import Overlay
from onnxstudio.render.qt_surface import QtSurface, qcolor
from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.theme import Theme
from onnxstudio.ui.tasks import TaskRunner, next_turn


class OverviewedView(Protocol):
    """What the minimap reads of the view it sits on (GraphCanvas), named here so the
    two modules do not import each other."""

    def graph_layout(self) -> Layout | None: ...
    def painter(self) -> GraphPainter | None: ...
    def overlay(self) -> Overlay | None: ...
    def theme(self) -> Theme: ...
    def viewport(self) -> QWidget: ...
    def visible_scene_rect(self) -> QRectF: ...
    def centerOn(self, *args: object) -> None: ...


MAX_SIZE = QSize(220, 260)
CORNER_MARGIN = 12
INNER_PAD = 6


def overview_size(layout: Layout) -> QSize:
    """The minimap's size for ``layout``: the graph's aspect within ``MAX_SIZE``."""
    w, h = max(layout.width, 1.0), max(layout.height, 1.0)
    s = min((MAX_SIZE.width() - 2 * INNER_PAD) / w, (MAX_SIZE.height() - 2 * INNER_PAD) / h)
    return QSize(max(40, int(w * s) + 2 * INNER_PAD), max(40, int(h * s) + 2 * INNER_PAD))


def _placement(size: QSize, layout: Layout | None) -> tuple[float, QPointF]:
    """Scale and offset of the graph inside a minimap of ``size`` (centred, padded)."""
    if layout is None:
        return 1.0, QPointF(INNER_PAD, INNER_PAD)
    s = min((size.width() - 2 * INNER_PAD) / max(layout.width, 1.0),
            (size.height() - 2 * INNER_PAD) / max(layout.height, 1.0))
    return s, QPointF((size.width() - layout.width * s) / 2,
                      (size.height() - layout.height * s) / 2)


def _key(graph: GraphPainter | None, overlay: Overlay | None, size: QSize, dpr: float
         ) -> tuple[object, ...]:
    """What an overview image shows. The painter is held weakly: a closed tab's painter
    (and layout) must be freed when the tab lets go of it, not when the minimap repaints."""
    return (weakref.ref(graph) if graph is not None else None,
            graph.theme if graph is not None else None, overlay, size, dpr)


def render_overview(graph: GraphPainter | None, size: QSize, dpr: float,
                    overlay: Overlay | None = None) -> QImage:
    """The overview image (transparent around the graph); safe off the GUI thread."""
    image = QImage(int(size.width() * dpr), int(size.height() * dpr),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(dpr)
    image.fill(Qt.GlobalColor.transparent)
    if graph is None:
        return image
    s, off = _placement(size, graph.layout)
    painter = QPainter(image)
    try:
        painter.translate(off)
        painter.scale(s, s)
        # The overview shows the heatmap too: where the hot spots are in a big graph.
        graph.paint(QtSurface(painter), None, s, PaintState(overlay=overlay))
    finally:
        painter.end()
    return image


class Minimap(QWidget):
    """Overlay in the view's bottom-right corner; a child of the GraphView itself (not
    of its viewport, whose scrolling would drag children along)."""

    def __init__(self, view: QWidget) -> None:
        super().__init__(view)
        self._view = cast(OverviewedView, view)  # a GraphCanvas
        self._image: QImage | None = None
        self._image_for: tuple[object, ...] = ()  # what _image shows (see _wanted)
        self._rendering: tuple[object, ...] = ()  # what the image being rendered shows
        # While this says so (a model landing: its panels' views on a worker, then the
        # panels), the render waits: its worker's Python slowed their Qt calls (40 ms of
        # BERT-96's panels froze the window for 100).
        self.defer_while: Callable[[], bool] = lambda: False
        # False: never shown (View → Minimap off, or a diff's narrow panes, where it
        # covered a third of the nodes)
        self.allowed = True
        self._renderer = TaskRunner(self)
        self._renderer.finished.connect(self._rendered)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self.hide()

    # -- called by the view -------------------------------------------------------------

    def layout_changed(self) -> None:
        """The layout, theme or overlay changed: the next paint checks the image."""
        self.reposition()
        self.view_changed()

    def offer(self, image: QImage, graph: GraphPainter, overlay: Overlay | None) -> None:
        """An overview painted off-thread by ``render_overview`` for ``graph`` (with the
        theme it has now) and ``overlay``; used while it is what the view shows."""
        self._image = image
        self._image_for = _key(graph, overlay, image.deviceIndependentSize().toSize(),
                               image.devicePixelRatio())

    def _wanted(self) -> tuple[object, ...]:
        return _key(self._view.painter(), self._view.overlay(), self.size(),
                    self.devicePixelRatioF())

    def _same(self, a: tuple[object, ...], b: tuple[object, ...]) -> bool:
        return len(a) == len(b) and a[0] == b[0] and a[1] == b[1] and a[2] is b[2] \
            and a[3:] == b[3:]

    def view_changed(self) -> None:
        layout = self._view.graph_layout()
        wanted = self.allowed and layout is not None and not self._whole_graph_visible()
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
        size = overview_size(layout)
        if size != self.size():
            self.resize(size)
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

    def scene_point(self, pos: QPointF) -> QPointF:
        """Scene coordinates of a point on the minimap."""
        s, off = _placement(self.size(), self._view.graph_layout())
        return QPointF((pos.x() - off.x()) / s, (pos.y() - off.y()) / s)

    # -- painting -----------------------------------------------------------------------

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
        wanted = self._wanted()
        if self._image is not None and self._same(self._image_for, wanted):
            p.drawImage(0, 0, self._image)
        elif not self._same(self._rendering, wanted):
            # Started a turn later: a landing model's panels fill first, not while the
            # worker's Python slows each of their Qt calls.
            self._rendering = wanted
            next_turn(self, self._render)
        # The visible area.
        visible = self._view.visible_scene_rect()
        s, off = _placement(self.size(), self._view.graph_layout())
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

    def _render(self) -> None:
        """Paint the image on a worker. On the GUI thread it took from 10 ms (1,000 boxes)
        to 180 ms (BERT-96), and while another task ran Python each of its Qt calls
        waited for the GIL (20 ms of work froze the window for 170 ms); in the open task
        it delayed the first paint of a big graph by as much."""
        if self.defer_while():
            next_turn(self, self._render)
            return
        wanted = self._wanted()
        if self._image is not None and self._same(self._image_for, wanted):
            self._rendering = ()
            return  # offered meanwhile (painted by a heatmap's task)
        graph, size, dpr, overlay = (self._view.painter(), self.size(),
                                     self.devicePixelRatioF(), self._view.overlay())
        self._rendering = wanted
        # Its Qt objects (a line per route bend) led a full collection on the worker that
        # froze the window 35 ms after dag100k's expand-all: see tasks._Runnable.
        self._renderer.start(lambda _context: (render_overview(graph, size, dpr, overlay),
                                               wanted), quiet_gc=True)

    def _rendered(self, result: tuple[QImage, tuple[object, ...]]) -> None:
        self._image, self._image_for = result
        self._rendering = ()
        self.update()

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
