"""Drag-and-drop events as a file manager sends them, built alike on every PySide6 we allow."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent


def drag_enter(pos: QPoint, mime: QMimeData,
               modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
               ) -> QDragEnterEvent:
    """A copy-drag of ``mime`` entering at ``pos``. PySide6 6.12 deprecates the QPoint
    constructor (a DeprecationWarning, an error under our pytest settings) for a QPointF
    one that 6.11 and older lack."""
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, modifiers)
    try:
        return QDragEnterEvent(QPointF(pos), *args)
    except TypeError:  # PySide6 < 6.12
        return QDragEnterEvent(pos, *args)
