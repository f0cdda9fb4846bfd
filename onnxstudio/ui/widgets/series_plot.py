"""A line over time: one value per audio window (a voice detector's speech probability),
with the time and value ranges written on the axes."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from onnxstudio.model.formatting import format_number


class SeriesPlot(QWidget):
    """Values left to right, one step apart; probabilities (all in [0, 1]) on a 0-1 axis,
    anything else between its own minimum and maximum."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.values: list[float] = []
        self.step_s = 0.0
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(300, 130)

    def set_series(self, values: list[float], step_s: float, title: str) -> None:
        self.values, self.step_s = list(values), step_s
        self.setToolTip(title)
        self.update()

    def value_range(self) -> tuple[float, float]:
        finite = [v for v in self.values if v == v and abs(v) != float("inf")]
        if not finite:
            return 0.0, 1.0
        lo, hi = min(finite), max(finite)
        if lo >= 0.0 and hi <= 1.0:
            return 0.0, 1.0
        return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)

    def plot_rect(self) -> QRectF:
        metrics = self.fontMetrics()
        left = max(metrics.horizontalAdvance(format_number(v, 3)) for v in self.value_range())
        return QRectF(self.rect().adjusted(left + 8, 6, -8, -(metrics.height() + 6)))

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        text = palette.color(QPalette.ColorRole.Text)
        plot = self.plot_rect()
        lo, hi = self.value_range()
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.drawRect(plot)
        painter.setPen(text)
        right = Qt.AlignmentFlag.AlignRight
        h = self.fontMetrics().height()
        painter.drawText(QRectF(0, plot.top() - h / 2, plot.left() - 4, h),
                         right | Qt.AlignmentFlag.AlignVCenter, format_number(hi, 3))
        painter.drawText(QRectF(0, plot.bottom() - h / 2, plot.left() - 4, h),
                         right | Qt.AlignmentFlag.AlignVCenter, format_number(lo, 3))
        duration = len(self.values) * self.step_s
        painter.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), h),
                         Qt.AlignmentFlag.AlignLeft, "0 s")
        painter.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), h), right,
                         f"{duration:.2f} s, {len(self.values)} windows")
        if self.values:
            dx = plot.width() / max(1, len(self.values) - 1)
            points = [QPointF(plot.left() + k * dx,
                              plot.bottom() - (min(max(v, lo), hi) - lo) / (hi - lo)
                              * plot.height())
                      for k, v in enumerate(self.values)]
            painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 2))
            painter.drawPolyline(QPolygonF(points))
        painter.end()
