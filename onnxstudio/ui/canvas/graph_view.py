"""GraphView: the zoomable, pannable canvas that shows one laid-out graph.

GraphCanvas (graph_canvas.py) holds the view state and paints; this class adds what the
user does with it: hover and tooltips, click and rubber-band selection, double-click to
expand, wheel, pinch and key zoom, Space/drag panning, the context menu.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import (
    QContextMenuEvent,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QNativeGestureEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QGestureEvent,
    QPinchGesture,
    QToolTip,
    QWidget,
)

from onnxstudio.layout.types import Box
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.theme import LIGHT, Theme
from onnxstudio.ui.canvas.band_select import combine, group_members
from onnxstudio.ui.canvas.graph_canvas import GraphCanvas

WHEEL_ZOOM_PER_NOTCH = 1.2  # one wheel notch is 120 units of angleDelta
DRAG_THRESHOLD = 4  # pixels before a press on empty space becomes a pan


BAND_MODIFIERS = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier


class GraphView(GraphCanvas):
    """Shows a :class:`Layout` and answers the mouse and keyboard; its signals are
    declared (and documented) on :class:`GraphCanvas`."""

    def __init__(self, parent: QWidget | None = None, theme: Theme = LIGHT) -> None:
        super().__init__(parent, theme)
        self._press_pos: QPoint | None = None
        self._press_button = Qt.MouseButton.NoButton
        self._panning = False
        self._press_on_box = False
        self._last_pan: QPoint | None = None
        self._space_held = False  # Space + drag pans, as in drawing tools
        self._pinch_scale = 1.0

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
        # On empty canvas a drag pans, as in Netron; with Shift (adds) or Ctrl (toggles)
        # it draws a selection band.
        if box_id is None and event.modifiers() & BAND_MODIFIERS:
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

