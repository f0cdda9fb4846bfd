"""GraphView: the zoomable, pannable canvas that shows one laid-out graph.

Why no QGraphicsItem per node: a 100k-node graph would mean 200k+ Python-wrapped items,
seconds to build the scene's BSP index and hundreds of MB, every time the user expands a
group. Instead the scene is empty except for its rect, and :meth:`drawBackground` asks
the shared :class:`~onnxstudio.render.scene_painter.GraphPainter` to draw only the
exposed rectangle, culled with a numpy index (~1 ms for 100k boxes). Hit testing uses
that same index, and exports use the same painter, so the screen and files agree.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QNativeGestureEvent,
    QPainter,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QFrame,
    QGestureEvent,
    QGraphicsScene,
    QGraphicsView,
    QPinchGesture,
    QToolTip,
    QWidget,
)

from onnxstudio.layout import viewport
from onnxstudio.layout.types import Box, Layout
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.overlay import Overlay
from onnxstudio.render.qt_surface import QtSurface
from onnxstudio.render.scene_painter import GraphPainter, PaintState
from onnxstudio.render.theme import LIGHT, Theme
from onnxstudio.ui.canvas.band_select import RubberBand, combine, group_members
from onnxstudio.ui.canvas.overlay_legend import OverlayLegend

SCENE_MARGIN = 40.0
MIN_SCALE = 0.01
MAX_SCALE = 8.0
KEY_ZOOM = 1.25
WHEEL_ZOOM_PER_NOTCH = 1.2  # one wheel notch is 120 units of angleDelta
FLASH_MS = 1400
DRAG_THRESHOLD = 4  # pixels before a press on empty space becomes a pan


class GraphView(QGraphicsView):
    """Shows a :class:`Layout`; emits selection and expand/collapse requests.

    Signals: ``selectionChanged(list[str])`` box ids, ``expandRequested(str)`` for a
    collapsed group or expandable node (double-click), ``collapseRequested(str)`` for an
    expanded group (double-click on its frame label), ``hoveredChanged(str)`` ("" when
    nothing), ``viewportChanged()`` whenever the visible area or zoom changes,
    ``edgeClicked(str)`` the tensor name of an edge clicked on empty canvas,
    ``overlayClosed()`` when the user dismisses the overlay's legend.
    """

    selectionChanged = Signal(list)
    expandRequested = Signal(str)
    collapseRequested = Signal(str)
    hoveredChanged = Signal(str)
    viewportChanged = Signal()
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
        self._surface: QtSurface | None = None
        self._press_pos: QPoint | None = None
        self._press_button = Qt.MouseButton.NoButton
        self._panning = False
        self._press_on_box = False
        self._last_pan: QPoint | None = None
        self._space_held = False  # Space + drag pans, as in drawing tools
        self._pinch_scale = 1.0
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

        from onnxstudio.ui.canvas.minimap import Minimap  # local: minimap imports this module

        self.band = RubberBand(self.viewport())
        self.minimap = Minimap(self)
        self.legend = OverlayLegend(self)
        self.legend.closed.connect(self.overlayClosed)
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
        self, layout: Layout | None, keep_view: bool = True, painter: GraphPainter | None = None
    ) -> None:
        """Show ``layout``; with ``keep_view`` the box nearest the centre stays put.

        Used after expand/collapse: the re-laid-out graph should not jump away from
        what the user was looking at. ``painter``: a ``GraphPainter(layout)`` built in
        the layout worker (it is Qt-free), which saves its numpy index build (~0.2 s for
        100k boxes) on the GUI thread.
        """
        anchor = self._view_anchor() if keep_view and self._graph is not None else None
        scale = self.current_scale()
        self._layout = layout
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
        self.viewport().update()
        self._on_view_changed()
        if selection_changed:
            self.selectionChanged.emit(list(self._selected))

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        if self._graph is not None:
            self._graph.theme = theme
        self._apply_theme_colours()
        self.minimap.layout_changed()
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
        self.viewport().update()

    def overlay(self) -> Overlay | None:
        return self._state.overlay

    def set_highlighted(self, ids: set[str] | frozenset[str]) -> None:
        """Ring these boxes (search matches); ids hidden in collapsed groups show once revealed."""
        self._state.highlighted = frozenset(ids)
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

    def current_scale(self) -> float:
        return float(self.transform().m11())

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

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
        target = box.center if box is not None else self._group_centre(box_id)
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

    def zoom_by(self, factor: float, anchor: QPoint | None = None) -> None:
        """Multiply the zoom, keeping the scene point under ``anchor`` (view pos) fixed."""
        if anchor is None:
            anchor = self.viewport().rect().center()
        before = self.mapToScene(anchor)
        target = min(self._max_scale(), max(self._min_scale(), self.current_scale() * factor))
        self._set_scale(target)
        after = self.mapFromScene(before)
        delta = after - anchor
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + delta.x())
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() + delta.y())
        self._on_view_changed()

    def zoom_in(self) -> None:
        self.zoom_by(KEY_ZOOM)

    def zoom_out(self) -> None:
        self.zoom_by(1 / KEY_ZOOM)

    def reset_zoom(self) -> None:
        self.zoom_by(1.0 / max(self.current_scale(), 1e-9))

    def fit(self) -> None:
        """Whole graph in view (Ctrl+0), but never so small that titles vanish: a graph
        too long for that is shown from its inputs, to be scrolled."""
        if self._layout is None:
            return
        vp = self.viewport().rect()
        scale = viewport.fit_scale(self._layout, vp.width(), vp.height())
        self._set_scale(scale)
        super().centerOn(QPointF(*viewport.view_centre(
            self._layout, vp.width(), vp.height(), scale)))
        self._on_view_changed()

    # -- view state helpers -------------------------------------------------------------

    def _min_scale(self) -> float:
        """Zooming out by hand may go below Fit, down to half the whole-graph scale."""
        if self._layout is None:
            return MIN_SCALE
        vp = self.viewport().rect()
        whole = viewport.whole_scale(self._layout, vp.width(), vp.height())
        return max(MIN_SCALE / 10, min(viewport.FIT_MIN_SCALE, whole * 0.5))

    def _max_scale(self) -> float:
        return MAX_SCALE

    def _set_scale(self, s: float) -> None:
        self.setTransform(QTransform.fromScale(s, s))

    def _initial_view(self) -> None:
        """The whole graph when its titles are readable so (>= 9 px), else readable at
        its inputs (layout/viewport.py)."""
        if self._layout is None:
            return
        vp = self.viewport().rect()
        scale, centre = viewport.first_view(self._layout, vp.width(), vp.height())
        self._set_scale(scale)
        super().centerOn(QPointF(*centre))

    def _view_anchor(self) -> tuple[str, float, float, QPointF] | None:
        """(box id nearest the view centre, its offset from the centre, centre point)."""
        index = self.index()
        centre = self.mapToScene(self.viewport().rect().center())
        if index is None or not index.ids:
            return None
        cx = (index.bx0 + index.bx1) / 2 - centre.x()
        cy = (index.by0 + index.by1) / 2 - centre.y()
        i = int((cx * cx + cy * cy).argmin())
        return index.ids[i], float(cx[i]), float(cy[i]), centre

    def _group_centre(self, group_id: str) -> tuple[float, float] | None:
        if self._layout is None:
            return None
        for g in self._layout.groups:
            if g.id == group_id:
                return (g.x + g.width / 2, g.y + g.height / 2)
        return None

    def _restore_anchor(self, anchor: tuple[str, float, float, QPointF], scale: float) -> None:
        box_id, dx, dy, centre = anchor
        self._set_scale(scale)
        index = self.index()
        box = index.box(box_id) if index else None
        where = box.center if box is not None else self._group_centre(box_id)
        if where is not None:
            super().centerOn(QPointF(where[0] - dx, where[1] - dy))
        else:
            super().centerOn(centre)

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
        self.viewportChanged.emit()
        self.minimap.view_changed()

    # -- painting -----------------------------------------------------------------------

    def drawBackground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        rect = QRectF(rect)
        painter.fillRect(rect, QColor(self._theme.canvas))
        if self._graph is None:
            return
        if self._surface is None:
            self._surface = QtSurface(painter)
        else:
            self._surface.bind(painter)
        scale = painter.worldTransform().m11()
        self._graph.paint(
            self._surface, (rect.x(), rect.y(), rect.width(), rect.height()), scale, self._state
        )

    # -- hover and tooltips -------------------------------------------------------------

    def _update_hover(self, pos: QPoint) -> None:
        index = self.index()
        if index is None:
            return
        p = self.mapToScene(pos)
        box_id = index.box_at(p.x(), p.y())
        edges: frozenset[int] = frozenset()
        boxes: frozenset[str] = frozenset()
        if box_id is not None:
            hood = index.neighbours(box_id)
            edges = frozenset(hood.incoming + hood.outgoing)
            boxes = hood.boxes
        else:
            edge = index.edge_near(p.x(), p.y(), 4.0 / max(self.current_scale(), 1e-6))
            if edge is not None:
                edges = frozenset({edge})
        if box_id == self._state.hovered and edges == self._state.related_edges:
            return
        changed = box_id != self._state.hovered
        self._state.hovered = box_id
        self._state.related_boxes = boxes
        self._state.related_edges = edges
        self.viewport().update()
        if changed:
            self.hoveredChanged.emit(box_id or "")

    def hovered_id(self) -> str | None:
        return self._state.hovered

    def _tooltip_text(self, pos: QPoint) -> str:
        index = self.index()
        if index is None or self._layout is None:
            return ""
        p = self.mapToScene(pos)
        box_id = index.box_at(p.x(), p.y())
        if box_id is not None:
            box = index.box(box_id)
            assert box is not None
            return self._box_tooltip(box, index)
        group = index.group_label_at(p.x(), p.y())
        if group is not None:
            g = self._layout.groups[index.group_position[group]]
            return (
                f"<b>{html.escape(g.label)}</b><br>{g.node_count} nodes<br>"
                "<i>double-click to collapse</i>"
            )
        edge = index.edge_near(p.x(), p.y(), 4.0 / max(self.current_scale(), 1e-6))
        if edge is not None:
            e = self._layout.edges[edge]
            shape = f"<br>{html.escape(e.label)}" if e.label else ""
            return f"<b>{html.escape(e.value)}</b>{shape}"
        return ""

    def _box_tooltip(self, box: Box, index: GraphIndex) -> str:
        overlay = self._state.overlay
        if box.kind == "group":
            tip = overlay.tips.get(box.id) if overlay is not None else None
            return (
                f"<b>{html.escape(box.title)}</b><br>{html.escape(box.subtitle)}<br>"
                + (f"{tip}<br>" if tip else "")
                + "<i>double-click to expand</i>"
            )
        lines = [f"<b>{html.escape(box.subtitle or box.title)}</b>"]
        if box.kind in ("node", "function"):
            lines.append(html.escape(box.title))
        outs: dict[str, str] = {}
        for i in index.outgoing(box.id):
            e = index.layout.edges[i]
            outs.setdefault(e.value, e.label)
        for value, shape in outs.items():
            lines.append(f"→ {html.escape(value)}" + (f": {html.escape(shape)}" if shape else ""))
        lines.extend(html.escape(d) for d in box.details[:6])
        overlay = self._state.overlay
        if overlay is not None and box.id in overlay.tips:
            lines.append(overlay.tips[box.id])  # already HTML: numbers and names escaped
        if box.expandable:
            lines.append("<i>double-click to expand</i>")
        return "<br>".join(lines)

    # -- events -------------------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:
        etype = event.type()
        if etype == QEvent.Type.ToolTip:
            pos = event.pos()  # type: ignore[attr-defined]
            text = self._tooltip_text(pos)
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        if etype == QEvent.Type.Gesture and isinstance(event, QGestureEvent):
            pinch = event.gesture(Qt.GestureType.PinchGesture)
            if isinstance(pinch, QPinchGesture):
                self._pinch(pinch)
                return True
        if (
            etype == QEvent.Type.NativeGesture
            and isinstance(event, QNativeGestureEvent)
            and event.gestureType() == Qt.NativeGestureType.ZoomNativeGesture
        ):
            pos = self.viewport().mapFromGlobal(event.globalPosition().toPoint())
            self.zoom_by(1.0 + event.value(), pos)
            return True
        if etype == QEvent.Type.Leave and self._state.hovered is not None:
            self._state.hovered = None
            self._state.related_boxes = frozenset()
            self._state.related_edges = frozenset()
            self.viewport().update()
            self.hoveredChanged.emit("")
        return super().viewportEvent(event)

    def _pinch(self, pinch: QPinchGesture) -> None:
        if pinch.state() == Qt.GestureState.GestureStarted:
            self._pinch_scale = 1.0
        factor = pinch.totalScaleFactor() / max(self._pinch_scale, 1e-6)
        self._pinch_scale = pinch.totalScaleFactor()
        centre = self.viewport().mapFromGlobal(pinch.centerPoint().toPoint())
        self.zoom_by(factor, centre)

    def wheelEvent(self, event: QWheelEvent) -> None:
        pixel = event.pixelDelta()
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if not pixel.isNull() and not ctrl:
            # Touchpad two-finger scroll: pan, as every other canvas app does.
            QAbstractScrollArea.wheelEvent(self, event)
            return
        delta = event.angleDelta().y() or event.angleDelta().x()
        if delta:
            self.zoom_by(WHEEL_ZOOM_PER_NOTCH ** (delta / 120), event.position().toPoint())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        mods = event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        if event.matches(QKeySequence.StandardKey.ZoomIn) or key in (
            Qt.Key.Key_Plus,
            Qt.Key.Key_Equal,
        ):
            self.zoom_in()
        elif event.matches(QKeySequence.StandardKey.ZoomOut) or key in (
            Qt.Key.Key_Minus,
            Qt.Key.Key_Underscore,
        ):
            self.zoom_out()
        elif key == Qt.Key.Key_0 and ctrl:
            self.fit()
        elif key == Qt.Key.Key_1 and ctrl:
            self.reset_zoom()
        elif key == Qt.Key.Key_Escape:
            self.clear_selection()
        elif key == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = False
            self.viewport().unsetCursor()
        super().keyReleaseEvent(event)

    def select_in_view_rect(self, rect: QRect, modifiers: Qt.KeyboardModifier) -> None:
        """Select the boxes a viewport rectangle touches (replace, Shift adds, Ctrl toggles)."""
        index = self.index()
        if index is None:
            return
        r = self.mapToScene(rect).boundingRect()
        hits = index.boxes_in((r.x(), r.y(), r.width(), r.height()))
        self.set_selection(combine(self._selected, hits, modifiers))

    def select_group(self, group_id: str, modifiers: Qt.KeyboardModifier) -> None:
        """Select every box drawn inside an expanded group (a click on its title)."""
        if self._layout is not None:
            members = group_members(self._layout, group_id)
            self.set_selection(combine(self._selected, members, modifiers))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position().toPoint()
        self._press_pos = pos
        self._press_button = event.button()
        self._last_pan = pos
        self._panning = False
        self._press_on_box = False
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        if event.button() == Qt.MouseButton.MiddleButton or (
            event.button() == Qt.MouseButton.LeftButton and self._space_held
        ):
            self._start_pan()
            event.accept()
            return
        if event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        box_id = self.box_at_view(pos)
        if box_id is not None:
            mods = event.modifiers()
            additive = bool(
                mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
            )
            if additive:
                ids = list(self._selected)
                if box_id in ids and mods & Qt.KeyboardModifier.ControlModifier:
                    ids.remove(box_id)
                elif box_id not in ids:
                    ids.append(box_id)
                self.set_selection(ids)
            else:
                self.set_selection([box_id])
        self._press_on_box = box_id is not None
        if box_id is None:
            self.band.press(pos, event.modifiers())
        event.accept()

    def _start_pan(self) -> None:
        self._panning = True
        self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position().toPoint()
        buttons = event.buttons()
        if self.band.pending() and buttons & Qt.MouseButton.LeftButton:
            self.band.move(pos)
            event.accept()
            return
        if self._press_pos is not None and buttons & (
            Qt.MouseButton.LeftButton | Qt.MouseButton.MiddleButton
        ):
            if not self._panning and (pos - self._press_pos).manhattanLength() >= DRAG_THRESHOLD:
                self._start_pan()
            if self._panning and self._last_pan is not None:
                d = pos - self._last_pan
                self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - d.x())
                self.verticalScrollBar().setValue(self.verticalScrollBar().value() - d.y())
            self._last_pan = pos
            event.accept()
            return
        self._update_hover(pos)
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        band = self.band.release() if self.band.pending() else None
        if band is not None:
            self.select_in_view_rect(band, self.band.modifiers)
        elif self._panning:
            self.viewport().unsetCursor()
            if self._space_held:
                self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        elif (
            self._press_pos is not None
            and not self._press_on_box
            and event.button() == Qt.MouseButton.LeftButton
            and self._press_button == Qt.MouseButton.LeftButton
            and not event.modifiers()
            & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        ):
            self._click_empty(event.position().toPoint())
        self._panning = False
        self._press_pos = None
        self._last_pan = None
        event.accept()

    def _click_empty(self, pos: QPoint) -> None:
        """A plain click off the boxes: a group's title selects the group, else an edge
        is marked (to show its values), else the selection is cleared."""
        index = self.index()
        p = self.mapToScene(pos)
        group = index.group_label_at(p.x(), p.y()) if index is not None else None
        if group is not None:
            self.select_group(group, Qt.KeyboardModifier.NoModifier)
            return
        self.clear_selection()
        self._click_edge(pos)

    def _click_edge(self, pos: QPoint) -> None:
        """A click on an edge marks it and names its tensor (to show its values)."""
        index = self.index()
        if index is None or self._layout is None:
            return
        p = self.mapToScene(pos)
        edge = index.edge_near(p.x(), p.y(), 4.0 / max(self.current_scale(), 1e-6))
        if edge is None:
            return
        self._state.selected_edges = frozenset({edge})
        self.viewport().update()
        self.edgeClicked.emit(self._layout.edges[edge].value)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """Right-click: a box (selected first, as file managers do) or an edge's tensor."""
        index = self.index()
        if index is None or self._layout is None:
            return
        box_id = self.box_at_view(event.pos())
        if box_id is not None:
            if box_id not in self._selected:
                self.set_selection([box_id])
            self.contextRequested.emit("box", box_id, event.globalPos())
            return
        p = self.mapToScene(event.pos())
        edge = index.edge_near(p.x(), p.y(), 4.0 / max(self.current_scale(), 1e-6))
        if edge is not None:
            self.contextRequested.emit("edge", self._layout.edges[edge].value,
                                       event.globalPos())

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self.index() is None:
            super().mouseDoubleClickEvent(event)
            return
        pos = event.position().toPoint()
        box_id = self.box_at_view(pos)
        index = self.index()
        assert index is not None
        if box_id is not None:
            box = index.box(box_id)
            if box is not None and (box.kind == "group" or box.expandable):
                self.expandRequested.emit(box_id)
        else:
            p = self.mapToScene(pos)
            group = index.group_label_at(p.x(), p.y())
            if group is not None:
                self.collapseRequested.emit(group)
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.minimap.reposition()
        self.legend.reposition()
        self._on_view_changed()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._on_view_changed()
