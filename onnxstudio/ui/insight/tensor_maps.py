"""The tensor view's Feature maps tab: a mosaic of up to 64 channels of a convolution
activation, normalised per map or globally, wrapped to the dock's width.

The mosaic is built only while the tab is shown, and again when the batch, the width or
the window colours change; the channel the Values table shows is framed in its gap.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPalette, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.formatting import format_number, shape_list
from onnxstudio.runner.featuremaps import FeatureGrid, feature_map_grid
from onnxstudio.ui.insight.tensor_parts import MosaicLabel, number_text
from onnxstudio.ui.widgets.images import qimage_from_array

MAX_MAPS = 64
MAP_TILE = 128  # largest side a map is enlarged to in the dock (a 7x7 map: 126 px)
SCALE_CHOICES = (("Per map", "per-map"), ("Global", "global"))


def has_maps(a: np.ndarray) -> bool:
    """Spatial float activations (C×H×W or N×C×H×W with H, W > 1) have feature maps."""
    return (a.ndim in (3, 4) and a.dtype.kind == "f" and a.size > 0
            and a.shape[-1] > 1 and a.shape[-2] > 1)


class FeatureMapsPage(QWidget):
    """The mosaic tab. ``position()`` answers (batch, channel) as the Values tab shows
    them; ``shown()`` whether this tab is the one on screen."""

    channelClicked = Signal(int)
    channelOpened = Signal(int)  # double-click: show it in Values

    def __init__(self, position: Callable[[], tuple[int, int]], shown: Callable[[], bool],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._position, self._shown = position, shown
        self._array: np.ndarray | None = None
        self._grid: FeatureGrid | None = None
        self._stale = True
        self._width = 0
        self._base = QPixmap()
        self._build()
        # Re-wrap the mosaic to the dock's width once resizing pauses.
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(80)
        self._relayout.timeout.connect(self._width_changed)

    def _build(self) -> None:
        self.scale_combo = QComboBox()
        for title, key in SCALE_CHOICES:
            self.scale_combo.addItem(title, key)
        self.scale_combo.setToolTip("Per map: each map uses its own range (weak channels "
                                    "stay visible)\nGlobal: one range for all maps "
                                    "(strengths stay comparable)")
        self.scale_combo.currentIndexChanged.connect(self.mark_stale)
        self.grid_note = QLabel()
        self.grid_note.setWordWrap(True)
        self.grid_note.setEnabled(False)
        self.grid_label = MosaicLabel()
        self.grid_label.describe = self.mosaic_tooltip
        self.grid_label.tileClicked.connect(self.channelClicked)
        self.grid_label.tileActivated.connect(self.channelOpened)
        self.grid_scroll = QScrollArea()
        self.grid_scroll.setWidget(self.grid_label)
        self.grid_scroll.setWidgetResizable(False)
        self.grid_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.grid_scroll.setFrameShape(QFrame.Shape.NoFrame)
        scale_row = QHBoxLayout()
        scale_row.addWidget(QLabel("Normalise"))
        scale_row.addWidget(self.scale_combo)
        scale_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.setSpacing(4)
        layout.addLayout(scale_row)
        layout.addWidget(self.grid_note)
        layout.addWidget(self.grid_scroll, 1)

    # --- API ----------------------------------------------------------------------
    def set_array(self, array: np.ndarray | None) -> None:
        """A new tensor (None: none): the old mosaic no longer applies."""
        self._array, self._grid, self._stale = array, None, True
        self.grid_label.grid = None
        if array is None:
            self.grid_label.clear()

    def grid(self) -> FeatureGrid | None:
        """The mosaic's geometry (tile positions are label pixels), built if needed."""
        if self._array is None or not has_maps(self._array):
            return None
        if self._grid is None or self._stale:
            self._refresh()
        return self._grid

    def mark_stale(self) -> None:
        """The mosaic must be built again (new normalisation, batch, width or colours)."""
        self._stale = True
        self.refresh_if_shown()

    def refresh_if_shown(self) -> None:
        if (self._stale and self._array is not None and self._shown()
                and has_maps(self._array)):
            self._refresh()

    def position_changed(self) -> None:
        """The Values tab moved: a new batch needs a new mosaic, a new channel a frame."""
        if self._grid is not None and self._grid.batch != self._position()[0]:
            self.mark_stale()
        else:
            self.paint_selection()

    def mosaic_tooltip(self, x: int, y: int) -> str | None:
        """What hovering mosaic pixel (x, y) tells: channel, its range, the value there."""
        grid, a = self._grid, self._array
        if grid is None or a is None:
            return None
        hit = grid.pixel_at(x, y)
        if hit is None:
            return None
        channel, row, col = hit
        tile = grid.tiles[channel]
        index = (grid.batch, channel, row, col) if a.ndim == 4 else (channel, row, col)
        return (f"channel {channel}: min {number_text(tile.lo)}, max {number_text(tile.hi)}\n"
                f"{shape_list(index)} = {format_number(a[index])}")

    # --- internals ------------------------------------------------------------------
    def _available_width(self) -> int:
        """Viewport width with room kept for a vertical scroll bar, so that scroll bar
        appearing cannot change the layout that made it appear."""
        bar = self.grid_scroll.verticalScrollBar().sizeHint().width()
        return max(64, self.grid_scroll.width() - 2 * self.grid_scroll.frameWidth() - bar)

    def _refresh(self) -> None:
        a = self._array
        if a is None:
            return
        # Gaps in the window's shade, but never so dark that dead (black) maps merge.
        background = max(self.palette().color(QPalette.ColorRole.Window).lightness(), 96)
        self._width = self._available_width()
        grid = self._grid = feature_map_grid(
            a, self._position()[0], MAX_MAPS, MAP_TILE, str(self.scale_combo.currentData()),
            max_width=self._width, background=background)
        self._stale = False
        self.grid_label.grid = grid
        self._base = QPixmap.fromImage(qimage_from_array(grid.image))
        last = grid.tiles[-1]
        if last.x + last.w + grid.gap < self._base.width():
            # Empty cells after the last map would read as a grey (constant) map.
            painter = QPainter(self._base)
            right = last.x + last.w + grid.gap
            painter.fillRect(right, last.y, self._base.width() - right,
                             self._base.height() - last.y,
                             self.palette().color(QPalette.ColorRole.Window))
            painter.end()
        channels = "channel" if grid.total == 1 else "channels"
        shown = (f"showing {grid.shown} of {grid.total} {channels}" if grid.shown < grid.total
                 else f"{grid.total} {channels}")
        where = f" of batch {grid.batch}" if a.ndim == 4 and a.shape[0] > 1 else ""
        zoom = f", each pixel {grid.cell}×{grid.cell}" if grid.cell > 1 else ""
        thin = f", every {grid.step}th pixel" if grid.step > 1 else ""
        self.grid_note.setText(f"{shown}{where}{zoom}{thin}. Click a map to pick it in "
                               "Values; double-click to open it there.")
        self.paint_selection()

    def paint_selection(self) -> None:
        """Frame the channel the table shows, in the gap around its tile."""
        grid = self._grid
        if grid is None or self._base.isNull():
            return
        pixmap = QPixmap(self._base)
        channel = self._position()[1]
        if 0 <= channel < grid.shown and grid.gap:
            t, g = grid.tiles[channel], grid.gap
            color = self.palette().color(QPalette.ColorRole.Highlight)
            painter = QPainter(pixmap)
            painter.fillRect(t.x - g, t.y - g, t.w + 2 * g, g, color)
            painter.fillRect(t.x - g, t.y + t.h, t.w + 2 * g, g, color)
            painter.fillRect(t.x - g, t.y, g, t.h, color)
            painter.fillRect(t.x + t.w, t.y, g, t.h, color)
            painter.end()
        self.grid_label.setPixmap(pixmap)
        self.grid_label.resize(pixmap.size())

    def _width_changed(self) -> None:
        if self._grid is not None and self._available_width() != self._width:
            self.mark_stale()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout.start()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._grid is not None:
            self.mark_stale()  # the gaps follow the window colour
