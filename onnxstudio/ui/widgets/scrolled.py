"""A panel in a frameless scroll area, for docks that may be shorter than the panel."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


def scrolled(panel: QWidget) -> QScrollArea:
    """A dock may be short: its panel scrolls rather than forcing the window (and every
    restored geometry) to the panel's full height."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(panel)
    return area
