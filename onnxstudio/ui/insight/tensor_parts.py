"""The tensor view's parts: a 2-D slice as a lazily formatted table model, the feature-map
mosaic label that names the map under the mouse, and how a statistic is written."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import (
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QMouseEvent,
)
from PySide6.QtWidgets import (
    QLabel,
    QToolTip,
    QWidget,
)

from onnxstudio.model.formatting import format_number
from onnxstudio.runner.featuremaps import FeatureGrid
from onnxstudio.ui.widgets.tables import MatrixTableModel


def number_text(value: float | None, integral: bool = False) -> str:
    """A statistic or range end: "—" when there is none, integers without a fraction."""
    if value is None:
        return "—"
    if integral and float(value).is_integer():
        return str(int(value))
    return format_number(value)


class SliceTableModel(MatrixTableModel):
    """A 2-D numpy view as a table; cells are formatted only when Qt paints them."""

    def __init__(self) -> None:
        super().__init__()
        self._column_title: str | None = None

    def set_matrix(self, matrix: np.ndarray | None, column_title: str | None = None) -> None:
        """``matrix`` is kept as is (a view, not a copy); ``column_title`` names the one
        column of a 0-D/1-D tensor instead of numbering it."""
        self._column_title = column_title
        super().set_matrix(matrix)

    def header_text(self, section: int, orientation: Qt.Orientation) -> str:
        if orientation == Qt.Orientation.Horizontal and self._column_title is not None:
            return self._column_title
        return str(section)

    def role_data(self, row: int, column: int, role: int) -> object:
        if role == Qt.ItemDataRole.ToolTipRole:
            value = self.matrix()[row, column]
            return repr(float(value)) if isinstance(value, np.floating) else str(value)
        return None


class MosaicLabel(QLabel):
    """Shows the mosaic pixmap at (0, 0) so label and mosaic pixels coincide; reports
    which tile is clicked and shows a live tooltip for the pixel under the mouse."""

    tileClicked = Signal(int)  # channel
    tileActivated = Signal(int)  # double-click

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid: FeatureGrid | None = None
        self.describe: Callable[[int, int], str | None] | None = None  # set by the view
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setContentsMargins(0, 0, 0, 0)
        self.setMouseTracking(True)

    def _channel(self, pos: QPoint) -> int | None:
        return None if self.grid is None else self.grid.tile_at(pos.x(), pos.y())

    def mousePressEvent(self, event: QMouseEvent) -> None:
        channel = self._channel(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and channel is not None:
            self.tileClicked.emit(channel)
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        channel = self._channel(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and channel is not None:
            self.tileActivated.emit(channel)
        super().mouseDoubleClickEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position().toPoint()
        text = self.describe(pos.x(), pos.y()) if self.describe is not None else None
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(event)
