"""The tensor dock: one captured intermediate tensor as statistics, a histogram, a value
table and, for convolution activations, a mosaic of its channels.

The caller captures the tensor off the GUI thread and hands over the array; this widget
only displays it. Everything scales with what is on screen, not with the tensor: the
table is a model over a numpy view (Qt formats only the visible cells) and the mosaic
shows at most 64 maps, so a million-value tensor appears at once. In a narrow dock
every piece wraps or scrolls instead of widening it; in a wide one the header, statistics
and histogram make a column left of the values and maps (`SideBySide`). The maps are
their own tab (`tensor_maps`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QImage, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.formatting import human_bytes, plural, shape_list
from onnxstudio.runner.featuremaps import FeatureGrid, table_slice
from onnxstudio.runner.intermediates import TensorStats, histogram, tensor_stats
from onnxstudio.ui.insight.tensor_maps import FeatureMapsPage, has_maps
from onnxstudio.ui.insight.tensor_parts import SliceTableModel, number_text
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.empty_state import EmptyStateStack
from onnxstudio.ui.widgets.histogram import HistogramView
from onnxstudio.ui.widgets.images import qimage_from_array
from onnxstudio.ui.widgets.responsive import SideBySide
from onnxstudio.ui.widgets.wrapping import breakable

EMPTY_TEXT = "Run the model, then click a node or an edge to see its tensor here"
ALERT = QColor("#d0312d")  # readable on light and dark backgrounds
SPIN_CAP = 110  # widest an index spin box gets, however wide the dock


class TensorView(QWidget):
    """Dock content: ``show_tensor`` with a captured array; ``set_busy`` while capturing,
    ``show_error`` when that fails, ``clear`` when the model or run changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name: str | None = None
        self._array: np.ndarray | None = None
        self._spins: list[QSpinBox] = []

        self.banner = ErrorBanner()

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.values_tab = self.tabs.addTab(self._build_values_page(), "Values")
        self.maps = FeatureMapsPage(self._position,
                                    lambda: self.tabs.currentIndex() == self.maps_tab)
        self.maps.channelClicked.connect(self.select_channel)
        self.maps.channelOpened.connect(self._open_channel)
        self.maps_tab = self.tabs.addTab(self.maps, "Feature maps")
        self.tabs.currentChanged.connect(lambda _i: self.maps.refresh_if_shown())
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
        self.type_label.setText(f"{a.dtype} {shape} · {plural(a.size, 'value')}")
        self.caption_label.setText(breakable(caption))
        self.caption_label.setToolTip(caption)
        self.caption_label.setVisible(bool(caption))
        self._show_stats(stats if stats is not None else tensor_stats(a), a)
        self._build_spins(self._table_array().shape, previous)
        self._update_table()
        maps = has_maps(a)
        self.tabs.setTabVisible(self.maps_tab, maps)
        if not maps and self.tabs.currentIndex() == self.maps_tab:
            self.tabs.setCurrentIndex(self.values_tab)
        self.maps.set_array(a)
        self.banner.hide()
        self.stack.setCurrentIndex(1)
        self.maps.refresh_if_shown()

    def clear(self, message: str | None = None) -> None:
        """Forget the tensor (a new run or model makes it stale) and show ``message``."""
        self._name, self._array = None, None
        self.maps.set_array(None)
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
        table_slice(self._table_array(), indices)  # validates count and ranges
        for spin, i in zip(self._spins, indices, strict=True):
            spin.blockSignals(True)
            spin.setValue(int(i))
            spin.blockSignals(False)
        self._indices_changed()

    def feature_grid(self) -> FeatureGrid | None:
        """The mosaic's geometry (tile positions are label pixels), built if needed."""
        return self.maps.grid()

    def grid_image(self) -> QImage | None:
        """The mosaic as computed (without the selection frame); None if not applicable."""
        grid = self.feature_grid()
        return None if grid is None else qimage_from_array(grid.image)

    def select_channel(self, channel: int) -> None:
        """Show ``channel`` in the table (clicking a tile does this)."""
        if self._array is None or self._array.ndim < 3 or not self._spins:
            return
        spin = self._spins[-1]  # the channel dim: N C [H W] or C [H W]
        spin.setValue(channel)

    # --- internals ------------------------------------------------------------------

    def _position(self) -> tuple[int, int]:
        """(batch, channel) the table shows, as the mosaic frames them."""
        a, spins = self._array, self._spins
        batch = spins[0].value() if a is not None and a.ndim == 4 and spins else 0
        return batch, spins[-1].value() if spins else -1

    def _show_stats(self, st: TensorStats, a: np.ndarray) -> None:
        integral = a.dtype.kind in "iub"
        labels = self.stat_labels
        labels["min"].setText(number_text(st.min, integral))
        labels["max"].setText(number_text(st.max, integral))
        labels["mean"].setText(number_text(st.mean))
        labels["std"].setText(number_text(st.std))
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
        self.histogram.set_histogram(counts, edges, number_text(st.min, integral),
                                     number_text(st.max, integral))

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

    def _table_dims(self) -> tuple[int, ...]:
        """The dims of the tensor the Values table steps through: all of them, or, when
        at most two are longer than 1, only those ([1,1000,1,1] is a column of 1,000
        values, not one cell and a spin box stepping through them)."""
        a = self._array
        if a is None:
            return ()
        kept = tuple(i for i, n in enumerate(a.shape) if n != 1)
        return kept if a.ndim >= 2 and len(kept) <= 2 and len(kept) < a.ndim \
            else tuple(range(a.ndim))

    def _table_array(self) -> np.ndarray:
        a = self._array
        if a is None:
            return np.zeros(0)
        dims = self._table_dims()
        return a if len(dims) == a.ndim else a.reshape([a.shape[i] for i in dims] or [1])

    def _update_table(self) -> None:
        if self._array is None:
            self.model.set_matrix(None)
            self.slice_label.setText("")
            return
        a, dims = self._table_array(), self._table_dims() or (0,)
        if a.ndim <= 1:
            self.model.set_matrix(table_slice(a, []), "value")
            self.slice_label.setText(f"rows: index in dim {dims[0]}" if a.ndim == 1 else "")
            self.slice_label.setVisible(a.ndim == 1)
            return
        if 0 in a.shape[:-2]:
            self.model.set_matrix(None)
        else:
            self.model.set_matrix(table_slice(a, self.leading_indices()))
        rows, cols = dims[-2], dims[-1]
        self.slice_label.setText(f"rows: dim {rows} ({a.shape[-2]}) · "
                                 f"columns: dim {cols} ({a.shape[-1]})")
        self.slice_label.setVisible(True)

    def _indices_changed(self) -> None:
        a = self._array
        if a is None:
            return
        self._update_table()
        self.maps.position_changed()

    def _open_channel(self, channel: int) -> None:
        self.select_channel(channel)
        self.tabs.setCurrentIndex(self.values_tab)
