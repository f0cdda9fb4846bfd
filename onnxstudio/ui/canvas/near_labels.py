"""The edge labels around a canvas' view, placed between its paints.

A paint places the labels of the tiles it shows that are not placed yet
(render/edge_labels.py: a few ms a tile of expanded dag100k, 1.5-2 s for all of them).
After each paint that shows labels, this places the tiles around the view one per turn
of the event loop, nearest first, until an area three views wide and high is done: a
pan then finds its labels placed, and only a jump pays for the tiles it shows first.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QRectF, QTimer

from onnxstudio.render.scene_painter import GraphPainter, PaintState, lod

DEFER_MS = 30  # how long it waits again while ``defer_while`` says so


class NearLabels(QObject):
    """Owned by a canvas: ``painted(scale)`` after each paint."""

    def __init__(self, parent: QObject, painter: Callable[[], GraphPainter | None],
                 state: PaintState, view: Callable[[], QRectF],
                 scale: Callable[[], float]) -> None:
        super().__init__(parent)
        self._painter, self._state, self._view, self._scale = painter, state, view, scale
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._place_one)
        # While this says so (the tab's tasks running Python), it waits: a tile placed on
        # the GUI thread then waits for the GIL at each of its numpy steps (expanded
        # dag100k's Expand All: 70-106 ms gaps with it, 44-50 without).
        self.defer_while: Callable[[], bool] = lambda: False

    def painted(self, scale: float) -> None:
        """A paint at ``scale`` is done: place around it next, when it showed labels."""
        if self._state.show_edge_labels and lod(scale)[3]:
            self._timer.start(0)

    def _place_one(self) -> None:
        if self.defer_while():
            self._timer.start(DEFER_MS)
            return
        graph = self._painter()
        if graph is None or not (self._state.show_edge_labels and lod(self._scale())[3]):
            return
        r = self._view()
        around = (r.x() - r.width(), r.y() - r.height(), 3 * r.width(), 3 * r.height())
        tile = graph.labels.unplaced_near(around, self._state.show_names)
        if tile is not None:
            graph.labels.placed_in(tile, self._state.show_names)
            self._timer.start(0)
