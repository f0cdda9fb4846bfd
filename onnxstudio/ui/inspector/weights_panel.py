"""Weights panel: one initializer's values, statistics, histogram and a value table.

Reading and statistics are a TaskRunner task (a 400 MB embedding must not freeze the
window); a newer request supersedes an older one, so a user clicking through weights
sees the last one clicked. The table is a model over the
array, so Qt only ever formats the cells on screen.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.formatting import format_number, human_bytes
from onnxstudio.model.graph import Graph, InitializerInfo, Model
from onnxstudio.model.index import ModelIndex
from onnxstudio.model.quantized import dequantize_nbits
from onnxstudio.model.weights import (
    TensorStats,
    WeightStore,
    as_matrix,
    display_array,
    row_index_label,
    save_npy,
    tensor_stats,
)
from onnxstudio.ui.tasks import TaskRunner
from onnxstudio.ui.widgets.empty_state import EmptyStateStack
from onnxstudio.ui.widgets.histogram import HistogramView
from onnxstudio.ui.widgets.tables import MatrixTableModel

EMPTY_TEXT = "Click a weight (an initializer input of a node) to see its values"


@dataclass(frozen=True)
class LoadedWeight:
    name: str
    raw: np.ndarray  # as onnx returned it (bfloat16 stays bfloat16)
    values: np.ndarray  # display form: bfloat16/float8 widened to float32
    stats: TensorStats
    dequantised: bool = False  # values are the K×N weights packed int4 blocks stand for


class ArrayTableModel(MatrixTableModel):
    """A 2-D view (``as_matrix``) of an N-D array; rows labelled by their N-D index."""

    digits = 5

    def __init__(self) -> None:
        super().__init__()
        self._shape: tuple[int, ...] = ()

    def set_array(self, array: np.ndarray | None) -> None:
        self._shape = () if array is None else tuple(array.shape)
        self.set_matrix(None if array is None else as_matrix(array))

    def header_text(self, section: int, orientation: Qt.Orientation) -> str:
        if orientation == Qt.Orientation.Horizontal:
            return str(section)
        return row_index_label(self._shape, section)


def _load(store: WeightStore, graph: Graph, name: str) -> LoadedWeight:
    """The weight's values; an int4/8 MatMulNBits weight dequantised to the K×N floats
    it stands for (its packed bytes say nothing to a reader)."""
    raw = store.read(name)
    unpacked = dequantize_nbits(graph, name, store.read)
    values = display_array(raw) if unpacked is None else unpacked
    return LoadedWeight(name, raw, values, tensor_stats(values), unpacked is not None)


class WeightsPanel(QWidget):
    """Dock content; ``show_initializer(model, name)`` starts reading in the background."""

    loaded = Signal(str)  # initializer name, once its values are displayed
    failed = Signal(str)  # user-facing message

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.store: WeightStore | None = None
        self.current: LoadedWeight | None = None
        self._loader = TaskRunner(self)  # the newest request wins
        self._loader.finished.connect(self._on_done)
        self._loader.failed.connect(self._on_failed)

        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.stat_labels: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(2)
        for key, label in (("dtype", "Type"), ("shape", "Shape"), ("size", "Size"),
                           ("min", "Min"), ("max", "Max"), ("mean", "Mean"), ("std", "Std"),
                           ("zeros", "Zeros"), ("nonfinite", "NaN / Inf")):
            value = QLabel("…")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.stat_labels[key] = value
            form.addRow(label, value)
        self.histogram = HistogramView()
        self.table_model = ArrayTableModel()
        self.table = QTableView()
        self.table.setModel(self.table_model)
        self.table.horizontalHeader().setDefaultSectionSize(90)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        copy_values = QAction("Copy selected values", self.table)
        copy_values.setShortcut(QKeySequence.StandardKey.Copy)
        copy_values.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy_values.triggered.connect(self.copy_selection)
        copy_name = QAction("Copy tensor name", self.table)
        copy_name.triggered.connect(
            lambda: self.current and QGuiApplication.clipboard().setText(self.current.name))
        self.table.addActions([copy_values, copy_name])
        self.save_button = QPushButton("Save as .npy…")
        self.save_button.clicked.connect(self.save_dialog)
        self.save_button.setEnabled(False)

        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.save_button)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(self.histogram)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)

        self.stack = EmptyStateStack(self, EMPTY_TEXT, content)
        self.placeholder = self.stack.placeholder

    # --- API -------------------------------------------------------------------

    def set_model(self, model: Model | None) -> None:
        self.model = model
        self.store = WeightStore(model.path) if model is not None else None
        self.clear()

    def clear(self) -> None:
        self._loader.cancel()
        self.current = None
        self.table_model.set_array(None)
        self.stack.setCurrentIndex(0)

    def show_initializer(self, model: Model, name: str) -> None:
        """Show ``name`` (an initializer of the main graph or a body); reads off-thread."""
        if model is not self.model:
            self.set_model(model)
        info = ModelIndex.of(model).find_initializer(name)
        if info is None or self.store is None:
            self.clear()
            self.placeholder.setText(f"'{name}' is not an initializer of this model")
            return
        self.current = None
        self._show_info(info)
        self.stack.setCurrentIndex(1)
        store = self.store
        graph = model.graph
        self._loader.start(lambda _context: _load(store, graph, name))

    def _show_info(self, info: InitializerInfo) -> None:
        where = ""
        if info.external_location:
            where = ("<br><span style='color:gray;'>external data: "
                     f"{html.escape(info.external_location)}</span>")
        self.title.setText(f"<b>{html.escape(info.name)}</b>{where}")
        shape = "[" + ", ".join(str(d) for d in info.shape) + "]" if info.shape else "scalar"
        labels = self.stat_labels
        labels["dtype"].setText(info.dtype)
        labels["shape"].setText(shape)
        labels["size"].setText(f"{info.elements:,} values · {human_bytes(info.nbytes)}")
        for key in ("min", "max", "mean", "std", "zeros", "nonfinite"):
            labels[key].setText("…")
        self.histogram.set_histogram(np.zeros(0), np.zeros(0))
        self.table_model.set_array(None)
        self.status.setText("Reading values…")
        self.save_button.setEnabled(False)

    def _on_done(self, result: LoadedWeight) -> None:
        self.current = result
        s = result.stats
        labels = self.stat_labels
        fmt = format_number
        labels["min"].setText("—" if s.minimum is None else fmt(s.minimum))
        labels["max"].setText("—" if s.maximum is None else fmt(s.maximum))
        labels["mean"].setText("—" if s.mean is None else fmt(s.mean))
        labels["std"].setText("—" if s.std is None else fmt(s.std))
        labels["zeros"].setText(f"{s.zero_share:.2%} ({s.zeros:,})")
        labels["nonfinite"].setText(f"{s.nans:,} / {s.infs:,}")
        if result.raw.dtype != result.values.dtype:
            labels["dtype"].setText(f"{result.raw.dtype.name} (shown as {result.values.dtype})")
        if result.dequantised:
            k, n = result.values.shape
            labels["shape"].setText(f"{labels['shape'].text()}: blocks of a {k}×{n} "
                                    "weight, shown dequantised")
        self.histogram.set_histogram(
            s.histogram, s.edges, "" if s.minimum is None else format_number(s.minimum),
            "" if s.maximum is None else format_number(s.maximum))
        self.table_model.set_array(result.values)
        self.status.setText("")
        self.save_button.setEnabled(True)
        self.loaded.emit(result.name)

    def _on_failed(self, message: str) -> None:
        self.status.setText(f"⚠ {message}")
        self.failed.emit(message)

    def selection_text(self) -> str:
        """Selected cells as tab-separated rows (what Ctrl+C copies), in table order."""
        indexes = sorted(self.table.selectionModel().selectedIndexes(),
                         key=lambda i: (i.row(), i.column()))
        rows: dict[int, list[str]] = {}
        for index in indexes[:100_000]:
            rows.setdefault(index.row(), []).append(str(self.table_model.data(index)))
        return "\n".join("\t".join(cells) for cells in rows.values())

    def copy_selection(self) -> None:
        text = self.selection_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    # --- saving --------------------------------------------------------------------

    def save_dialog(self) -> None:
        if self.current is None or self.model is None:
            return
        suggested = self.model.path.parent / (self.current.name.replace("/", "_") + ".npy")
        path, _ = QFileDialog.getSaveFileName(self, "Save weight as .npy", str(suggested),
                                              "NumPy array (*.npy)")
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> Path | None:
        """Write the displayed values; refuses the model file itself (the dialog already
        asked about overwriting any other existing file)."""
        if self.current is None or self.model is None:
            return None
        if path.suffix != ".npy":
            path = path.with_name(path.name + ".npy")  # np.save would append it anyway
        if path.resolve() == self.model.path.resolve():
            QMessageBox.warning(self, "Save weight", "That is the model file; choose another.")
            return None
        try:
            return save_npy(self.current.raw, path)
        except OSError as exc:
            QMessageBox.warning(self, "Save weight", f"Cannot write {path.name}: {exc}")
            return None
