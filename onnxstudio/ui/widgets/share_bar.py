"""A probability as a bar with its percentage beside the bar's end, readable whatever
the share: Fusion centres a progress bar's text over the chunk's edge, and half of
"97.3 %" was white on pale grey."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QProgressBar, QStyle, QStyleOptionProgressBar, QWidget

BAR_HEIGHT = 18  # the bar is this tall, centred in a taller cell


class ShareBar(QProgressBar):
    """0..1000 per mille; the text sits right of the chunk, or inside it, in the
    chunk's text colour, when the chunk leaves no room. As a table's cell widget it
    fills the cell and draws a ``BAR_HEIGHT`` band across its middle, so its text lines
    up with the row's other cells (a bar capped at 18 px sat at the cell's top)."""

    def __init__(self, share: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(0, 1000)
        self.setValue(round(max(0.0, min(1.0, share)) * 1000))
        self.setFormat(f"{share * 100:.1f} %")
        self.setTextVisible(False)
        self.setToolTip(self.format())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        option = QStyleOptionProgressBar()
        self.initStyleOption(option)
        band = min(self.height(), BAR_HEIGHT)
        option.rect = QRect(0, (self.height() - band) // 2, self.width(), band)
        self.style().drawControl(QStyle.ControlElement.CE_ProgressBar, option, painter, self)
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
