"""A panel in a frameless scroll area, for docks that may be shorter than the panel."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class VerticalScroll(QScrollArea):
    """Scrolls up and down only, and is never narrower than its content's minimum: a dock
    squeezed below it cut its controls at the right edge ("Labels fil", "Bench")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        body = self.widget()
        if body is None:
            return hint
        width = (body.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
                 + 2 * self.frameWidth())
        return QSize(max(hint.width(), width), hint.height())


def scrolled(panel: QWidget) -> QScrollArea:
    """A dock may be short: its panel scrolls rather than forcing the window (and every
    restored geometry) to the panel's full height."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(panel)
    return area
