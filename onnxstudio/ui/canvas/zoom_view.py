"""ZoomView: where a canvas looks, apart from what it paints (see graph_canvas.py).

The zoom's limits, Fit, the first view of a new graph, and the anchor that keeps the
box at the view's centre in place when a relayout replaces the graph under it. All of
it needs only the layout and its hit index, so it sits below GraphCanvas' painting,
selection and overlays.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, Signal
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsView

from onnxstudio.layout import viewport
from onnxstudio.layout.types import Layout
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.scene_painter import Focus

MIN_SCALE = 0.01
MIN_FIT_SCALE = 1e-4  # below Fit of the largest graphs (dag100k's is ~0.002)
MAX_SCALE = 8.0
KEY_ZOOM = 1.25

Anchor = tuple[str, float, float, QPointF]  # box id, its offset from the centre, centre


class ZoomView(QGraphicsView):
    """The zoom and view-placing half of GraphCanvas; ``viewportChanged()`` whenever
    the visible area or zoom changes."""

    viewportChanged = Signal()

    _layout: Layout | None = None
    # a new graph opens whole (a diff's sides), not as ``viewport.first_view`` says
    open_fitted = False

    def index(self) -> GraphIndex | None:
        """The shown graph's hit index (GraphCanvas has one once a layout is set)."""
        return None

    def current_scale(self) -> float:
        return float(self.transform().m11())

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

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
        """The whole graph in view (Ctrl+0), however small its titles get."""
        if self._layout is None:
            return
        vp = self.viewport().rect()
        scale = viewport.fit_scale(self._layout, vp.width(), vp.height())
        self._set_scale(scale)
        super().centerOn(QPointF(*viewport.view_centre(
            self._layout, vp.width(), vp.height(), scale)))
        self._on_view_changed()

    def anchored_area(self) -> Focus | None:
        """Where ``set_layout(keep_view=True)`` will look in the next layout: the anchor
        box and the view's size in layout units (see ``Focus``)."""
        anchor = self._view_anchor()
        if anchor is None:
            return None
        scale = self.current_scale() or 1.0
        size = self.viewport().size()
        centre = anchor[3]
        return Focus(anchor[0], anchor[1], anchor[2], size.width() / scale,
                     size.height() / scale, (centre.x(), centre.y()))

    def _on_view_changed(self, *_: object) -> None:
        self.viewportChanged.emit()

    def _min_scale(self) -> float:
        """Zooming out by hand may go below Fit, down to half the whole-graph scale."""
        if self._layout is None:
            return MIN_SCALE
        vp = self.viewport().rect()
        whole = viewport.whole_scale(self._layout, vp.width(), vp.height())
        return max(MIN_FIT_SCALE, min(viewport.FIT_MIN_SCALE, whole * 0.5))

    def _max_scale(self) -> float:
        return MAX_SCALE

    def _set_scale(self, s: float) -> None:
        self.setTransform(QTransform.fromScale(s, s))

    def _initial_view(self) -> None:
        """The whole graph when its titles are readable so (>= 9 px), else readable at
        its inputs (layout/viewport.py)."""
        if self._layout is None:
            return
        if self.open_fitted:
            self.fit()
            return
        vp = self.viewport().rect()
        scale, centre = viewport.first_view(self._layout, vp.width(), vp.height())
        self._set_scale(scale)
        super().centerOn(QPointF(*centre))

    def _view_anchor(self) -> Anchor | None:
        """(box id nearest the view centre, its offset from the centre, centre point)."""
        index = self.index()
        centre = self.mapToScene(self.viewport().rect().center())
        if index is None or not index.ids:
            return None
        cx = (index.bx0 + index.bx1) / 2 - centre.x()
        cy = (index.by0 + index.by1) / 2 - centre.y()
        i = int((cx * cx + cy * cy).argmin())
        return index.ids[i], float(cx[i]), float(cy[i]), centre

    def _restore_anchor(self, anchor: Anchor, scale: float) -> None:
        box_id, dx, dy, centre = anchor
        self._set_scale(scale)
        index = self.index()
        where = index.centre(box_id) if index else None
        if where is not None:
            super().centerOn(QPointF(where[0] - dx, where[1] - dy))
        else:
            super().centerOn(centre)
