"""The one histogram widget (weights panel, tensor dock): bars over the finite values,
the range written under them, and the bin under the mouse named in a tooltip."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QMouseEvent, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from onnxstudio.model.formatting import format_number


class HistogramView(QWidget):
    """Bars over the finite values with the range under them; hovering names a bin.

    Bar heights use a square-root scale: after a ReLU half the values are often zero,
    and on a linear scale that one bin would flatten everything else.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts = np.zeros(0, dtype=np.int64)
        self.edges = np.zeros(0)
        self.labels = ("", "")
        self.setMouseTracking(True)
        self.setMinimumHeight(72)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(200, 84)

    def set_histogram(self, counts: np.ndarray, edges: np.ndarray,
                      low: str = "", high: str = "") -> None:
        """Bars from ``counts`` over ``edges``; ``low``/``high`` label the axis ends."""
        self.counts, self.edges, self.labels = counts, edges, (low, high)
        self.update()

    def plot_rect(self) -> QRectF:
        text = self.fontMetrics().height()
        return QRectF(self.rect().adjusted(4, 4, -4, -(text + 4)))

    def bin_at(self, x: float) -> int | None:
        """Index of the bar under widget x, or None outside the bars."""
        plot = self.plot_rect()
        if self.counts.size == 0 or not plot.left() <= x < plot.right():
            return None
        i = int((x - plot.left()) / (plot.width() / self.counts.size))
        return min(i, self.counts.size - 1)

    def tooltip_at(self, x: float) -> str | None:
        i = self.bin_at(x)
        if i is None:
            return None
        total = int(self.counts.sum())
        count = int(self.counts[i])
        close = "]" if i == self.counts.size - 1 else ")"
        share = count / total if total else 0.0
        return (f"[{format_number(self.edges[i])}, {format_number(self.edges[i + 1])}{close}"
                f"\n{count:,} values ({share:.2%})")

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        text = self.tooltip_at(event.position().x())
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        if self.counts.size == 0 or int(self.counts.max()) == 0:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No finite values")
            painter.end()
            return
        plot = self.plot_rect()
        peak = float(self.counts.max())
        width = plot.width() / self.counts.size
        color = palette.color(QPalette.ColorRole.Highlight)
        for i, count in enumerate(self.counts.tolist()):
            if count:
                h = max(1.0, plot.height() * (count / peak) ** 0.5)
                painter.fillRect(QRectF(plot.left() + i * width, plot.bottom() - h,
                                        max(1.0, width - 1), h), color)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        text_rect = self.rect().adjusted(4, 0, -4, -2)
        bottom = Qt.AlignmentFlag.AlignBottom
        painter.drawText(text_rect, bottom | Qt.AlignmentFlag.AlignLeft, self.labels[0])
        painter.drawText(text_rect, bottom | Qt.AlignmentFlag.AlignRight, self.labels[1])
        painter.end()
