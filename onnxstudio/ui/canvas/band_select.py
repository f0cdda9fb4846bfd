"""Selecting many boxes at once: a rubber band dragged on empty canvas, or a whole group.

Cutting a network by hand means selecting dozens of nodes; Ctrl-clicking each is not a
way to work. A band selects every box it touches: with Shift it adds, with Ctrl it
toggles. A plain drag on empty canvas pans, as Netron users expect (issue 34), as do a
drag that starts on a box, the middle button, and Space + drag.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QRubberBand, QWidget

from onnxstudio.layout.scopes import graph_scope_tree
from onnxstudio.layout.types import Layout
from onnxstudio.model.graph import Graph

DRAG_THRESHOLD = 6  # px of movement before a press on empty canvas becomes a band


def combine(current: Sequence[str], hits: Sequence[str],
            modifiers: Qt.KeyboardModifier) -> list[str]:
    """The new selection: replace; Shift adds what is not yet selected; Ctrl toggles."""
    if modifiers & Qt.KeyboardModifier.ControlModifier:
        hit = set(hits)
        return [i for i in current if i not in hit] + [i for i in hits if i not in current]
    if modifiers & Qt.KeyboardModifier.ShiftModifier:
        return [*current, *(i for i in hits if i not in current)]
    return list(hits)


def group_members(layout: Layout, group_id: str) -> list[str]:
    """Every drawn box inside an expanded group's frame, nested frames included."""
    frames = {g.id: g for g in layout.groups}
    out: list[str] = []
    pending = [group_id]
    while pending:
        frame = frames.get(pending.pop())
        if frame is None:
            continue
        for member in frame.members:
            if member in frames:
                pending.append(member)
            else:
                out.append(member)
    return out


def drawn_boxes(layout: Layout, graph: Graph, node_ids: Iterable[str]) -> list[str]:
    """The boxes showing these nodes: each node's own box, or the innermost collapsed
    group that hides it."""
    drawn = {b.id for b in layout.boxes}
    tree = graph_scope_tree(graph)
    out: dict[str, None] = {}
    for node_id in node_ids:
        target = node_id if node_id in drawn else next(
            (g.id for g in tree.ancestors(node_id) if g.id in drawn), None)
        if target is not None:
            out[target] = None
    return list(out)


class RubberBand:
    """The band's state between press and release, in viewport coordinates."""

    def __init__(self, viewport: QWidget) -> None:
        self._band = QRubberBand(QRubberBand.Shape.Rectangle, viewport)
        self._origin: QPoint | None = None
        self.modifiers = Qt.KeyboardModifier.NoModifier

    def press(self, pos: QPoint, modifiers: Qt.KeyboardModifier) -> None:
        self._origin, self.modifiers = pos, modifiers

    def pending(self) -> bool:
        """A press on empty canvas that may still become a band (or stay a click)."""
        return self._origin is not None

    def active(self) -> bool:
        return self._band.isVisible()

    def move(self, pos: QPoint) -> None:
        if self._origin is None:
            return
        if not self.active() and (pos - self._origin).manhattanLength() < DRAG_THRESHOLD:
            return
        self._band.setGeometry(QRect(self._origin, pos).normalized() | QRect(pos, QSize(1, 1)))
        self._band.show()

    def release(self) -> QRect | None:
        """The band's rectangle if one was dragged (None: it was a plain click)."""
        rect = self._band.geometry() if self.active() else None
        self._band.hide()
        self._origin = None
        return rect
