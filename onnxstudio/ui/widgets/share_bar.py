"""A probability as a bar with its percentage beside the bar's end, readable whatever
the share: Fusion centres a progress bar's text over the chunk's edge, and half of
"97.3 %" was white on pale grey."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QProgressBar, QWidget


class ShareBar(QProgressBar):
    """0..1000 per mille; the text sits right of the chunk, or inside it, in the
    chunk's text colour, when the chunk leaves no room."""

    def __init__(self, share: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, 1000)
        self.setValue(round(max(0.0, min(1.0, share)) * 1000))
        self.setFormat(f"{share * 100:.1f} %")
        self.setTextVisible(False)
        self.setToolTip(self.format())

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        painter = QPainter(self)
        text, inner = self.format(), self.rect().adjusted(4, 0, -4, 0)
        width = self.fontMetrics().horizontalAdvance(text)
        end = inner.left() + round(inner.width() * self.value() / 1000)
        if end + 4 + width <= inner.right():  # beside the chunk, on the groove
            where = QRect(end + 4, 0, width, self.height())
            painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        else:  # inside the chunk's end, on the highlight colour
            where = QRect(max(inner.left(), end - width - 4), 0, width, self.height())
            painter.setPen(self.palette().color(QPalette.ColorRole.HighlightedText))
        painter.drawText(where, int(Qt.AlignmentFlag.AlignVCenter), text)
        painter.end()
