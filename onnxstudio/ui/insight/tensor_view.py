"""The tensor dock: one captured intermediate tensor as statistics, a histogram, a value
table and, for convolution activations, a mosaic of its channels.

The caller captures the tensor off the GUI thread and hands over the array; this widget
only displays it. Everything scales with what is on screen, not with the tensor: the
table is a model over a numpy view (Qt formats only the visible cells) and the mosaic
shows at most 64 maps, so a million-value tensor appears at once. In a narrow dock
every piece wraps or scrolls instead of widening it; in a wide one the header, statistics
and histogram make a column left of the values and maps (`SideBySide`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import (
    QEvent,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QImage,
    QPainter,
    QPalette,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.formatting import format_number, human_bytes, shape_list
from onnxstudio.runner.featuremaps import FeatureGrid, feature_map_grid, table_slice
from onnxstudio.runner.intermediates import TensorStats, histogram, tensor_stats
from onnxstudio.ui.insight.tensor_parts import MosaicLabel, SliceTableModel
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.empty_state import EmptyStateStack
from onnxstudio.ui.widgets.histogram import HistogramView
from onnxstudio.ui.widgets.images import qimage_from_array
from onnxstudio.ui.widgets.responsive import SideBySide
from onnxstudio.ui.widgets.wrapping import breakable

EMPTY_TEXT = "Run the model, then click a node or an edge to see its tensor here"
MAX_MAPS = 64
MAP_TILE = 128  # largest side a map is enlarged to in the dock (a 7x7 map: 126 px)
ALERT = QColor("#d0312d")  # readable on light and dark backgrounds
SCALE_CHOICES = (("Per map", "per-map"), ("Global", "global"))
SPIN_CAP = 110  # widest an index spin box gets, however wide the dock


def _number(value: float | None, integral: bool = False) -> str:
    if value is None:
        return "—"
    if integral and float(value).is_integer():
        return str(int(value))
    return format_number(value)


class TensorView(QWidget):
    """Dock content: ``show_tensor`` with a captured array; ``set_busy`` while capturing,
    ``show_error`` when that fails, ``clear`` when the model or run changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name: str | None = None
        self._array: np.ndarray | None = None
        self._grid: FeatureGrid | None = None
        self._grid_stale = True
        self._grid_width = 0
        self._grid_base = QPixmap()
        self._spins: list[QSpinBox] = []

        self.banner = ErrorBanner()

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.values_tab = self.tabs.addTab(self._build_values_page(), "Values")
        self.maps_tab = self.tabs.addTab(self._build_maps_page(), "Feature maps")
        self.tabs.currentChanged.connect(lambda _i: self._refresh_grid_if_shown())
        # What the tensor is, its statistics and histogram on one side, the values and maps
        # on the other: above them in a side dock, a column to their left in a wide one.
        summary = self._build_summary()
        self.layout_switch = SideBySide(summary, self.tabs)
        content = QWidget()
        content_layout = QVBoxLayout(content)
        content_layout.setContentsMargins(6, 6, 6, 6)
        content_layout.addWidget(self.layout_switch)

        body = QWidget()
        self.stack = EmptyStateStack(body, EMPTY_TEXT, content)
        self.placeholder = self.stack.placeholder
        # A hidden page still counts towards a stack's minimum size: while the hint shows,
        # the tensor page's must not keep a short dock scrolling.
        self.stack.currentChanged.connect(
            lambda i: content.setSizePolicy(QSizePolicy.Policy.Preferred,
                                            QSizePolicy.Policy.Preferred if i == 1
                                            else QSizePolicy.Policy.Ignored))
        content.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        banner_box = QVBoxLayout()
        banner_box.setContentsMargins(6, 6, 6, 0)
        banner_box.addWidget(self.banner)
        outer.addLayout(banner_box)
        outer.addWidget(body, 1)

        # Re-wrap the mosaic to the dock's width once resizing pauses.
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(80)
        self._relayout.timeout.connect(self._width_changed)
        self.clear()

    def _build_summary(self) -> QWidget:
        """Name, type, caption, statistics (two per row, for a narrow dock), histogram."""
        # Header: what the tensor is.
        self.name_edit = QLineEdit()  # selectable and never widens the dock, unlike a label
        self.name_edit.setReadOnly(True)
        self.name_edit.setFrame(False)
        bold = QFont(self.name_edit.font())
        bold.setBold(True)
        self.name_edit.setFont(bold)
        self.name_edit.setStyleSheet("QLineEdit { background: transparent; }")
        self.type_label = QLabel()
        self.type_label.setWordWrap(True)
        self.type_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.caption_label = QLabel()
        self.caption_label.setWordWrap(True)
        self.caption_label.setEnabled(False)  # muted
        self.caption_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)

        # Statistics, two per row so they fit a narrow dock.
        self.stat_labels: dict[str, QLabel] = {}
        stats = QGridLayout()
        stats.setHorizontalSpacing(8)
        stats.setVerticalSpacing(1)
        for i, (key, title) in enumerate((("min", "Min"), ("max", "Max"), ("mean", "Mean"),
                                          ("std", "Std"), ("nan", "NaN"), ("inf", "Inf"),
                                          ("zeros", "Zeros"), ("size", "Size"))):
            key_label = QLabel(title)
            key_label.setEnabled(False)
            value = QLabel("—")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            self.stat_labels[key] = value
            row, col = divmod(i, 2)
            stats.addWidget(key_label, row, col * 2)
            stats.addWidget(value, row, col * 2 + 1)
        stats.setColumnStretch(1, 1)
        stats.setColumnStretch(3, 1)
        self.histogram = HistogramView()

        summary = QWidget()
        layout = QVBoxLayout(summary)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.name_edit)
        layout.addWidget(self.type_label)
        layout.addWidget(self.caption_label)
        layout.addSpacing(4)
        layout.addLayout(stats)
        layout.addSpacing(2)
        layout.addWidget(self.histogram)
        return summary

    def _build_values_page(self) -> QWidget:
        # Values tab: leading-index spin boxes above a virtual table.
        self.index_box = QWidget()
        self.index_grid = QGridLayout(self.index_box)
        self.index_grid.setContentsMargins(0, 0, 0, 0)
        self.index_grid.setHorizontalSpacing(6)
        self.index_grid.setVerticalSpacing(2)
        self.slice_label = QLabel()
        self.slice_label.setWordWrap(True)
        self.slice_label.setEnabled(False)
        self.model = SliceTableModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.table.horizontalHeader().setDefaultSectionSize(78)
        self.table.horizontalHeader().setMinimumSectionSize(24)
        vertical = self.table.verticalHeader()
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(self.fontMetrics().height() + 6)
        values_page = QWidget()
        values_layout = QVBoxLayout(values_page)
        values_layout.setContentsMargins(4, 6, 4, 4)
        values_layout.setSpacing(4)
        values_layout.addWidget(self.index_box)
        values_layout.addWidget(self.slice_label)
        values_layout.addWidget(self.table, 1)
        return values_page

    def _build_maps_page(self) -> QWidget:
        # Feature maps tab.
        self.scale_combo = QComboBox()
        for title, key in SCALE_CHOICES:
            self.scale_combo.addItem(title, key)
        self.scale_combo.setToolTip("Per map: each map uses its own range (weak channels "
                                    "stay visible)\nGlobal: one range for all maps "
                                    "(strengths stay comparable)")
        self.scale_combo.currentIndexChanged.connect(self._scale_changed)
        self.grid_note = QLabel()
        self.grid_note.setWordWrap(True)
        self.grid_note.setEnabled(False)
        self.grid_label = MosaicLabel()
        self.grid_label.describe = self.mosaic_tooltip
        self.grid_label.tileClicked.connect(self.select_channel)
        self.grid_label.tileActivated.connect(self._open_channel)
        self.grid_scroll = QScrollArea()
        self.grid_scroll.setWidget(self.grid_label)
        self.grid_scroll.setWidgetResizable(False)
        self.grid_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.grid_scroll.setFrameShape(QFrame.Shape.NoFrame)
        scale_row = QHBoxLayout()
        scale_row.addWidget(QLabel("Normalise"))
        scale_row.addWidget(self.scale_combo)
        scale_row.addStretch(1)
        maps_page = QWidget()
        maps_layout = QVBoxLayout(maps_page)
        maps_layout.setContentsMargins(4, 6, 4, 4)
        maps_layout.setSpacing(4)
        maps_layout.addLayout(scale_row)
        maps_layout.addWidget(self.grid_note)
        maps_layout.addWidget(self.grid_scroll, 1)
        return maps_page

    # --- API ----------------------------------------------------------------------

    def show_tensor(self, name: str, array: np.ndarray, caption: str = "", *,
                    stats: TensorStats | None = None) -> None:
        """Display ``array`` as the value ``name``; ``stats`` (e.g. ``Capture.stats``)
        saves recomputing them."""
        a = np.asarray(array)
        same_shape = self._array is not None and self._array.shape == a.shape
        previous = self.leading_indices() if same_shape else []
        self._name, self._array = name, a
        self.name_edit.setText(name)
        self.name_edit.setCursorPosition(0)
        self.name_edit.setToolTip(name)
        shape = shape_list(a.shape) if a.ndim else "scalar"
        self.type_label.setText(f"{a.dtype} {shape} · {a.size:,} value"
                                f"{'' if a.size == 1 else 's'}")
        self.caption_label.setText(breakable(caption))
        self.caption_label.setToolTip(caption)
        self.caption_label.setVisible(bool(caption))
        self._show_stats(stats if stats is not None else tensor_stats(a), a)
        self._build_spins(a.shape, previous)
        self._update_table()
        maps = self._has_maps(a)
        self.tabs.setTabVisible(self.maps_tab, maps)
        if not maps and self.tabs.currentIndex() == self.maps_tab:
            self.tabs.setCurrentIndex(self.values_tab)
        self._grid, self._grid_stale = None, True
        self.grid_label.grid = None
        self.banner.hide()
        self.stack.setCurrentIndex(1)
        self._refresh_grid_if_shown()

    def clear(self, message: str | None = None) -> None:
        """Forget the tensor (a new run or model makes it stale) and show ``message``."""
        self._name, self._array, self._grid = None, None, None
        self.grid_label.grid = None
        self.grid_label.clear()
        self.model.set_matrix(None)
        self._build_spins((), [])
        self.banner.hide()
        self.placeholder.setText(message or EMPTY_TEXT)
        self.stack.setCurrentIndex(0)

    def set_busy(self, message: str) -> None:
        """Say what is being captured; the previous tensor comes back if capture fails."""
        self.banner.hide()
        self.placeholder.setText(message)
        self.stack.setCurrentIndex(0)

    def show_error(self, message: str) -> None:
        """Report a failure above whatever is shown; nothing is cleared or blocked."""
        if self.stack.currentIndex() == 0:  # busy or empty
            if self._array is not None:
                self.stack.setCurrentIndex(1)
            else:
                self.placeholder.setText(EMPTY_TEXT)
        self.banner.show_message(message)

    def error_message(self) -> str | None:
        """The banner text while it is up (not dismissed)."""
        return self.banner.message() or None

    def placeholder_text(self) -> str | None:
        """The empty-state/busy text while it is what the user sees."""
        return self.placeholder.text() if self.stack.currentIndex() == 0 else None

    def current_name(self) -> str | None:
        return self._name

    def current_array(self) -> np.ndarray | None:
        return self._array

    def table_model(self) -> SliceTableModel:
        return self.model

    def stats_text(self) -> str:
        """The statistics as shown, one ``Title: value`` per line."""
        titles = {"min": "Min", "max": "Max", "mean": "Mean", "std": "Std", "nan": "NaN",
                  "inf": "Inf", "zeros": "Zeros", "size": "Size"}
        return "\n".join(f"{titles[k]}: {label.text()}" for k, label in self.stat_labels.items())

    def index_spins(self) -> list[QSpinBox]:
        """One spin box per leading dim (none for tensors of up to two dims)."""
        return list(self._spins)

    def leading_indices(self) -> list[int]:
        return [spin.value() for spin in self._spins]

    def set_leading_indices(self, indices: Sequence[int]) -> None:
        """Pick the slice the table shows (one index per dim before the last two)."""
        if self._array is None:
            raise ValueError("no tensor is shown")
        table_slice(self._array, indices)  # validates count and ranges
        for spin, i in zip(self._spins, indices, strict=True):
            spin.blockSignals(True)
            spin.setValue(int(i))
            spin.blockSignals(False)
        self._indices_changed()

    def feature_grid(self) -> FeatureGrid | None:
        """The mosaic's geometry (tile positions are label pixels), built if needed."""
        if self._array is None or not self._has_maps(self._array):
            return None
        if self._grid is None or self._grid_stale:
            self._refresh_grid()
        return self._grid

    def grid_image(self) -> QImage | None:
        """The mosaic as computed (without the selection frame); None if not applicable."""
        grid = self.feature_grid()
        return None if grid is None else qimage_from_array(grid.image)

    def select_channel(self, channel: int) -> None:
        """Show ``channel`` in the table (clicking a tile does this)."""
        if self._array is None or self._array.ndim < 3:
            return
        spin = self._spins[-1]  # the channel dim: N C [H W] or C [H W]
        spin.setValue(channel)

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
        return (f"channel {channel}: min {_number(tile.lo)}, max {_number(tile.hi)}\n"
                f"{shape_list(index)} = {format_number(a[index])}")

    # --- internals ------------------------------------------------------------------

    @staticmethod
    def _has_maps(a: np.ndarray) -> bool:
        return (a.ndim in (3, 4) and a.dtype.kind == "f" and a.size > 0
                and a.shape[-1] > 1 and a.shape[-2] > 1)

    def _show_stats(self, st: TensorStats, a: np.ndarray) -> None:
        integral = a.dtype.kind in "iub"
        labels = self.stat_labels
        labels["min"].setText(_number(st.min, integral))
        labels["max"].setText(_number(st.max, integral))
        labels["mean"].setText(_number(st.mean))
        labels["std"].setText(_number(st.std))
        numeric = a.dtype.kind in "fiub"
        for key, count in (("nan", st.nan), ("inf", st.inf)):
            label = labels[key]
            label.setText(f"{count:,}" if numeric else "—")
            palette = QPalette(self.palette())
            if count:
                palette.setColor(QPalette.ColorRole.WindowText, ALERT)
            label.setPalette(palette)
            font = label.font()
            font.setBold(bool(count))
            label.setFont(font)
        labels["zeros"].setText(f"{st.zeros / st.size:.2%} ({st.zeros:,})"
                                if numeric and st.size else "—")
        labels["size"].setText(human_bytes(st.nbytes))
        counts, edges = histogram(a)
        self.histogram.set_histogram(counts, edges, _number(st.min, integral),
                                     _number(st.max, integral))

    def _build_spins(self, shape: Sequence[int], previous: Sequence[int]) -> None:
        while self.index_grid.count():
            item = self.index_grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._spins = []
        lead = list(shape[:-2]) if len(shape) > 2 else []
        for dim, size in enumerate(lead):
            label = QLabel(f"dim {dim} (0–{max(size - 1, 0)})")
            label.setEnabled(size > 1)
            spin = QSpinBox()
            spin.setRange(0, max(size - 1, 0))
            spin.setEnabled(size > 1)
            spin.setAccessibleName(f"Index in dim {dim}")
            if dim < len(previous):
                spin.setValue(min(previous[dim], spin.maximum()))
            spin.valueChanged.connect(lambda _v: self._indices_changed())
            spin.setMaximumWidth(SPIN_CAP)
            label.setBuddy(spin)
            row, col = divmod(dim, 2)
            self.index_grid.addWidget(label, row, col * 2)
            self.index_grid.addWidget(spin, row, col * 2 + 1)
            self._spins.append(spin)
        self.index_grid.setColumnStretch(1, 1)
        self.index_grid.setColumnStretch(3, 1)
        self.index_grid.setColumnStretch(4, 1)  # what the capped spin boxes leave
        self.index_box.setVisible(bool(lead))

    def _update_table(self) -> None:
        a = self._array
        if a is None:
            self.model.set_matrix(None)
            self.slice_label.setText("")
            return
        if a.ndim <= 1:
            self.model.set_matrix(table_slice(a, []), "value")
            self.slice_label.setText("rows: index in dim 0" if a.ndim == 1 else "")
            self.slice_label.setVisible(a.ndim == 1)
            return
        if 0 in a.shape[:-2]:
            self.model.set_matrix(None)
        else:
            self.model.set_matrix(table_slice(a, self.leading_indices()))
        rows, cols = a.ndim - 2, a.ndim - 1
        self.slice_label.setText(f"rows: dim {rows} ({a.shape[rows]}) · "
                                 f"columns: dim {cols} ({a.shape[cols]})")
        self.slice_label.setVisible(True)

    def _indices_changed(self) -> None:
        a = self._array
        if a is None:
            return
        self._update_table()
        if self._grid is not None and a.ndim == 4 and self._grid.batch != self._spins[0].value():
            self._grid_stale = True
            self._refresh_grid_if_shown()
        else:
            self._paint_selection()

    def _open_channel(self, channel: int) -> None:
        self.select_channel(channel)
        self.tabs.setCurrentIndex(self.values_tab)

    def _scale_changed(self) -> None:
        self._grid_stale = True
        self._refresh_grid_if_shown()

    def _available_width(self) -> int:
        """Viewport width with room kept for a vertical scroll bar, so that scroll bar
        appearing cannot change the layout that made it appear."""
        bar = self.grid_scroll.verticalScrollBar().sizeHint().width()
        return max(64, self.grid_scroll.width() - 2 * self.grid_scroll.frameWidth() - bar)

    def _refresh_grid_if_shown(self) -> None:
        if (self._grid_stale and self._array is not None
                and self.tabs.currentIndex() == self.maps_tab and self._has_maps(self._array)):
            self._refresh_grid()

    def _refresh_grid(self) -> None:
        a = self._array
        if a is None:
            return
        batch = self._spins[0].value() if a.ndim == 4 and self._spins else 0
        # Gaps in the window's shade, but never so dark that dead (black) maps merge.
        background = max(self.palette().color(QPalette.ColorRole.Window).lightness(), 96)
        self._grid_width = self._available_width()
        self._grid = feature_map_grid(a, batch, MAX_MAPS, MAP_TILE,
                                      str(self.scale_combo.currentData()),
                                      max_width=self._grid_width,
                                      background=background)
        self._grid_stale = False
        grid = self._grid
        self.grid_label.grid = grid
        self._grid_base = QPixmap.fromImage(qimage_from_array(grid.image))
        last = grid.tiles[-1]
        if last.x + last.w + grid.gap < self._grid_base.width():
            # Empty cells after the last map would read as a grey (constant) map.
            painter = QPainter(self._grid_base)
            right = last.x + last.w + grid.gap
            painter.fillRect(right, last.y, self._grid_base.width() - right,
                             self._grid_base.height() - last.y,
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
        self._paint_selection()

    def _paint_selection(self) -> None:
        """Frame the channel the table shows, in the gap around its tile."""
        grid = self._grid
        if grid is None or self._grid_base.isNull():
            return
        pixmap = QPixmap(self._grid_base)
        channel = self._spins[-1].value() if self._spins else -1
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
        if self._grid is not None and self._available_width() != self._grid_width:
            self._grid_stale = True
            self._refresh_grid_if_shown()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout.start()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._grid is not None:
            self._grid_stale = True  # the gaps follow the window colour
            self._refresh_grid_if_shown()
