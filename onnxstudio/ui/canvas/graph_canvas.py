"""GraphCanvas: the state, selection and painting half of GraphView (see graph_view.py);
where the view looks (zoom, Fit, the anchor kept across a relayout) is ZoomView's
(zoom_view.py).

Why no QGraphicsItem per node: a 100k-node graph would mean 200k+ Python-wrapped items,
seconds to build the scene's BSP index and hundreds of MB, every time the user expands a
group. Instead the scene is empty except for its rect, and :meth:`drawBackground` asks
the shared :class:`~onnxstudio.render.scene_painter.GraphPainter` to draw only the
exposed rectangle, culled with a numpy index (~1 ms for 100k boxes). Hit testing uses
that same index, and exports use the same painter, so the screen and files agree.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QPainter,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsScene,
    QGraphicsView,
    QWidget,
)

from onnxstudio.layout.types import Layout
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.overlay import Overlay
from onnxstudio.render.qt_surface import Paths
from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.theme import LIGHT, Theme
from onnxstudio.ui.canvas.band_select import RubberBand
from onnxstudio.ui.canvas.far_view import FarView
from onnxstudio.ui.canvas.minimap import Minimap
from onnxstudio.ui.canvas.near_labels import NearLabels
from onnxstudio.ui.canvas.overlay_legend import OverlayLegend
from onnxstudio.ui.canvas.screen_surface import STAMP_MIN_BOXES, ScreenSurface
from onnxstudio.ui.canvas.zoom_view import ZoomView

SCENE_MARGIN = 40.0
FLASH_MS = 1400


class GraphCanvas(ZoomView):
    """Shows a :class:`Layout`: the view state, selection and painting of GraphView
    (which adds the mouse, keyboard and tooltips); emits selection and expand/collapse
    requests.

    Signals: ``selectionChanged(list[str])`` box ids, ``expandRequested(str)`` for a
    collapsed group or expandable node (double-click), ``collapseRequested(str)`` for an
    expanded group (double-click on its frame label), ``hoveredChanged(str)`` ("" when
    nothing), ``viewportChanged()`` (ZoomView's) whenever the visible area or zoom changes,
    ``edgeClicked(str)`` the tensor name of an edge clicked on empty canvas,
    ``overlayClosed()`` when the user dismisses the overlay's legend.
    """

    selectionChanged = Signal(list)
    expandRequested = Signal(str)
    collapseRequested = Signal(str)
    hoveredChanged = Signal(str)
    edgeClicked = Signal(str)
    contextRequested = Signal(str, str, QPoint)  # "box"/"edge", box id/tensor, global pos
    overlayClosed = Signal()

    def __init__(self, parent: QWidget | None = None, theme: Theme = LIGHT) -> None:
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self._theme = theme
        self._layout: Layout | None = None
        self._graph: GraphPainter | None = None
        self._state = PaintState()
        self._selected: list[str] = []
        self._surface: ScreenSurface | None = None
        self._paths: Paths | None = None  # prebuilt for the surface the next paint makes
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self._clear_flash)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self.setMouseTracking(True)
        self.viewport().setMouseTracking(True)
        self.viewport().grabGesture(Qt.GestureType.PinchGesture)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._apply_theme_colours()

        self.band = RubberBand(self.viewport())
        self.minimap = Minimap(self)
        self.legend = OverlayLegend(self)
        self.legend.closed.connect(self.overlayClosed)
        self.far = FarView(self, self.painter, self.overlay, self._min_scale)
        self.far.arrived.connect(self.viewport().update)
        self.near_labels = NearLabels(self, self.painter, self._state, self.visible_scene_rect,
                                      self.current_scale)
        # False when the owner shows the overlay's key itself (a diff tab's two narrow
        # canvases share one key in its header)
        self.show_legend = True
        self.horizontalScrollBar().valueChanged.connect(self._on_view_changed)
        self.verticalScrollBar().valueChanged.connect(self._on_view_changed)

    # -- public API ---------------------------------------------------------------------

    def graph_layout(self) -> Layout | None:
        return self._layout

    def painter(self) -> GraphPainter | None:
        """The GraphPainter in use (exporters can reuse it to draw exactly this view)."""
        return self._graph

    def paint_state(self) -> PaintState:
        return self._state

    def index(self) -> GraphIndex | None:
        return self._graph.index if self._graph else None

    def set_layout(
        self, layout: Layout | None, keep_view: bool = True, painter: GraphPainter | None = None,
        paths: Paths | None = None,
    ) -> None:
        """Show ``layout``; with ``keep_view`` the box nearest the centre stays put.

        Used after expand/collapse: the re-laid-out graph should not jump away from
        what the user was looking at. ``painter``: a ``GraphPainter(layout)`` built in
        the layout worker (it is Qt-free), which saves its numpy index build (~0.2 s for
        100k boxes) on the GUI thread; ``paths``: its long routes' QPainterPaths, built
        there too (``prebuilt_paths``).
        """
        anchor = self._view_anchor() if keep_view and self._graph is not None else None
        scale = self.current_scale()
        self._layout = layout
        if painter is None or painter.routes_from is None or painter.routes_from is not self._graph:
            self._surface = None  # its path cache holds the old painter's routes
            self._paths = paths  # the new one's, built by the layout task
        if layout is None:
            self._graph = None
        elif painter is not None and painter.layout is layout:
            painter.theme = self._theme
            self._graph = painter
        else:
            self._graph = GraphPainter(layout, self._theme)
        self._state.hovered = None
        self._state.related_boxes = frozenset()
        self._state.related_edges = frozenset()
        if layout is None:
            self.scene().setSceneRect(QRectF(0, 0, 1, 1))
        else:
            x, y, w, h = self._graph.bounds(SCENE_MARGIN)  # type: ignore[union-attr]
            self.scene().setSceneRect(QRectF(x, y, w, h))
        kept = [i for i in self._selected if self._graph and self._graph.index.box(i)]
        selection_changed = kept != self._selected
        self._selected = kept
        self._sync_selection_state()
        if layout is not None:
            if anchor is not None:
                self._restore_anchor(anchor, scale)
            else:
                self._initial_view()
        self.minimap.layout_changed()
        self.far.changed()
        self.viewport().update()
        self._on_view_changed()
        if selection_changed:
            self.selectionChanged.emit(list(self._selected))

    def add_paths(self, painter: GraphPainter, paths: Paths) -> None:
        """QPainterPaths built off the GUI thread for ``painter``'s long routes (the
        finisher smooths those not shown first), for the paints to come."""
        if painter is not self._graph:
            return
        if self._surface is not None:
            self._surface.add_paths(paths)
        else:
            self._paths = {**(self._paths or {}), **paths}

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        if self._graph is not None:
            self._graph.theme = theme
        if self._surface is not None:
            self._surface.forget_looks()  # drawn in the old colours
        self._apply_theme_colours()
        self.minimap.layout_changed()
        self.far.changed()
        self.viewport().update()

    def theme(self) -> Theme:
        return self._theme

    @property
    def show_names(self) -> bool:
        """Draw each node's name (the box subtitle) as well as its op type."""
        return self._state.show_names

    @show_names.setter
    def show_names(self, value: bool) -> None:
        self._state.show_names = bool(value)
        self.viewport().update()

    @property
    def show_edge_labels(self) -> bool:
        return self._state.show_edge_labels

    @show_edge_labels.setter
    def show_edge_labels(self, value: bool) -> None:
        self._state.show_edge_labels = bool(value)
        self.viewport().update()

    def selected_ids(self) -> list[str]:
        return list(self._selected)

    def set_selection(self, ids: list[str], emit: bool = True) -> None:
        """Select exactly ``ids`` (unknown ids are dropped)."""
        index = self.index()
        new = [i for i in dict.fromkeys(ids) if index is not None and index.box(i)]
        if new == self._selected:
            return
        self._selected = new
        self._sync_selection_state()
        self.viewport().update()
        if emit:
            self.selectionChanged.emit(list(new))

    def set_overlay(self, overlay: Overlay | None) -> None:
        """Colour boxes by a run's measurements (None: the category colours again)."""
        self._state.overlay = overlay
        self.legend.show_overlay(overlay if self.show_legend else None)
        self.minimap.layout_changed()
        self.far.changed()
        self.viewport().update()

    def overlay(self) -> Overlay | None:
        return self._state.overlay

    def set_highlighted(self, ids: set[str] | frozenset[str]) -> None:
        """Ring these boxes (search matches); ids hidden in collapsed groups show once revealed.
        The same matches ask no paint: the search panel refills with every edit's model
        (no query, no matches), and repainted BERT-96's canvas for nothing (15 ms)."""
        ids = frozenset(ids)
        if ids == self._state.highlighted:
            return
        self._state.highlighted = ids
        self.viewport().update()

    def mark_values(self, values: set[str]) -> None:
        """Draw the edges carrying these tensors as selected (a split's cut lines)."""
        layout = self._layout
        self._state.selected_edges = frozenset(
            i for i, edge in enumerate(layout.edges) if edge.value in values
        ) if layout is not None and values else frozenset()
        self.viewport().update()

    def highlighted_ids(self) -> set[str]:
        return set(self._state.highlighted)

    def clear_selection(self) -> None:
        self.set_selection([])

    def visible_box_ids(self) -> list[str]:
        index = self.index()
        if index is None:
            return []
        r = self.visible_scene_rect()
        return index.boxes_in((r.x(), r.y(), r.width(), r.height()))

    def box_at_view(self, pos: QPoint | QPointF) -> str | None:
        """Id of the box under a viewport position."""
        index = self.index()
        if index is None:
            return None
        p = self.mapToScene(pos.toPoint() if isinstance(pos, QPointF) else pos)
        return index.box_at(p.x(), p.y())

    def map_box_to_view(self, box_id: str) -> QPoint | None:
        """Viewport position of a box's centre (for tests and popups)."""
        index = self.index()
        box = index.box(box_id) if index else None
        return None if box is None else self.mapFromScene(QPointF(*box.center))

    def centerOn(self, *args: object) -> None:
        """``centerOn(box_id)`` centres a box and rings it briefly; Qt's overloads pass on."""
        if len(args) == 1 and isinstance(args[0], str):
            self.center_on_box(args[0])
            return
        super().centerOn(*args)  # type: ignore[call-overload]

    def center_on_box(self, box_id: str, flash: bool = True) -> bool:
        index = self.index()
        box = index.box(box_id) if index else None
        target = index.centre(box_id) if index else None
        if target is None:
            return False
        if self.current_scale() < 0.6:
            self._set_scale(1.0)
        super().centerOn(QPointF(*target))
        if flash and box is not None:
            self._state.flash = box_id
            self._flash_timer.start(FLASH_MS)
            self.viewport().update()
        self._on_view_changed()
        return True

    # -- view state helpers -------------------------------------------------------------

    def _apply_theme_colours(self) -> None:
        self.setBackgroundBrush(QColor(self._theme.canvas))

    def _sync_selection_state(self) -> None:
        self._state.selected = frozenset(self._selected)
        index = self.index()
        edges: set[int] = set()
        if index is not None and len(self._selected) <= 200:
            for box_id in self._selected:
                hood = index.neighbours(box_id)
                edges.update(hood.incoming)
                edges.update(hood.outgoing)
        self._state.selected_edges = frozenset(edges)

    def _clear_flash(self) -> None:
        self._state.flash = None
        self.viewport().update()

    def _on_view_changed(self, *_: object) -> None:
        super()._on_view_changed()
        self.minimap.view_changed()

    # -- painting -----------------------------------------------------------------------

    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        rect = QRectF(rect)
        painter.fillRect(rect, QColor(self._theme.canvas))
        if self._graph is None:
            return
        if self._surface is None:
            self._surface = ScreenSurface(painter, self._paths)
            self._paths = None
        else:
            self._surface.bind(painter)
        scale = painter.worldTransform().m11()
        self._surface.keeps_looks = len(self._graph.layout.boxes) >= STAMP_MIN_BOXES
        self._surface.show((rect.x(), rect.y(), rect.width(), rect.height()))
        if self.far.draw(painter, rect, scale):
            self._graph.coarse_marks(self._surface, self._state)
            return
        self._graph.paint(
            self._surface, (rect.x(), rect.y(), rect.width(), rect.height()), scale, self._state
        )
        self.near_labels.painted(scale)
