"""The Cost dock: what each node computes, stores and keeps alive, per node and per scope.

The panel gathers choices (symbolic dimension sizes, the cost the canvas is coloured
by), asks for a computation through `costRequested`, and shows the `ModelCost` it is
handed; `CostInsight` computes it on a worker. Tables sort numerically (the models' own
sort), and Export CSV… saves the node table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import OnnxStudioError
from onnxstudio.export.atomic import atomic_write
from onnxstudio.model.cost import ModelCost, NodeCost, ScopeCost
from onnxstudio.model.formatting import human_bytes, human_count, short_count
from onnxstudio.render.overlay import COST_METRICS
from onnxstudio.ui.insight.job_panel import JobPanel
from onnxstudio.ui.widgets.column_menu import ColumnChooser
from onnxstudio.ui.widgets.name_column import NameColumn
from onnxstudio.ui.widgets.path_delegate import PathDelegate, RightElided
from onnxstudio.ui.widgets.tables import RIGHT, Column, CompactHeader, RecordTableModel

NO_MODEL_TEXT = "Open a model to see what each node costs"
ID_ROLE = Qt.ItemDataRole.UserRole + 3
NO_COLOUR = "none"
RESIZE_ROWS = 40  # rows measured when fitting a column
NAME_MIN = 48  # the node column's least width, elided at the left (its end tells most)
OP_TYPE_CAP = 86  # the operator type at most (px): ReduceMean whole, LayerNorm… cut (124)


def _count(value: int) -> str:
    return short_count(value)  # 590K, not 589.82K: narrow number columns


class NodeCostModel(RecordTableModel[NodeCost]):
    aligned_headers = True
    columns = (
        Column("Node", lambda r: r.name or r.id, lambda r: (r.name or r.id).casefold()),
        Column("Op type", lambda r: r.op_type, lambda r: r.op_type.casefold()),
        Column("MACs", lambda r: _count(r.macs), lambda r: r.macs, RIGHT,
               "multiply-accumulates (Conv, Gemm, MatMul, attention), bias adds included"),
        Column("Element\nops", lambda r: _count(r.element_ops), lambda r: r.element_ops, RIGHT,
               "other arithmetic: one per output element"),
        Column("Params", lambda r: _count(r.params), lambda r: r.params, RIGHT),
        Column("Output", lambda r: human_bytes(r.output_bytes), lambda r: r.output_bytes, RIGHT),
        Column("Memory", lambda r: human_bytes(r.memory_bytes), lambda r: r.memory_bytes, RIGHT,
               "activations alive while this node runs, in the file's order"),
    )

    def record_data(self, record: NodeCost, column: int, role: int) -> object:
        if role == ID_ROLE:
            return record.id
        return None


class ScopeCostModel(RecordTableModel[ScopeCost]):
    aligned_headers = True
    columns = (
        Column("Scope", lambda r: "  " * (r.depth - 1) + r.name.rsplit("/", 1)[-1],
               lambda r: r.name.casefold()),
        Column("Nodes", lambda r: str(r.nodes), lambda r: r.nodes, RIGHT),
        Column("MACs", lambda r: _count(r.macs), lambda r: r.macs, RIGHT),
        Column("Params", lambda r: _count(r.params), lambda r: r.params, RIGHT),
        Column("Output", lambda r: human_bytes(r.output_bytes), lambda r: r.output_bytes, RIGHT),
    )

    def record_data(self, record: ScopeCost, column: int, role: int) -> object:
        if role == Qt.ItemDataRole.ToolTipRole:
            return record.name
        if role == ID_ROLE:
            return record.name
        return None


class CostTable(QTableView):
    """A cost table whose capped columns (an operator type, a kernel) stop at their cap,
    cut at the right, and whose less-used columns can be hidden (``chooser``)."""

    def __init__(self, caps: dict[int, int]) -> None:
        super().__init__()
        self.caps = caps
        self.chooser: ColumnChooser | None = None

    def sizeHintForColumn(self, column: int) -> int:
        hint = super().sizeHintForColumn(column)
        return min(hint, self.caps.get(column, hint))


def table_view(model: RecordTableModel[Any], key: str, hidden: tuple[str, ...] = (),
               caps: dict[int, int] | None = None) -> CostTable:
    """A cost table that fits its dock: the numbers take the width they need, the name
    column what is left, elided (at 1920 px the Params column scrolled out of sight),
    or as wide as the user drags it (remembered under ``key``). The columns titled in
    ``hidden`` start hidden (the header's right-click menu shows them, remembered);
    ``caps`` bound a column's width (px), its text cut at the right."""
    view = CostTable(caps or {})
    view.setHorizontalHeader(CompactHeader(view))
    view.setModel(model)
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    rows = view.verticalHeader()
    rows.setDefaultSectionSize(view.fontMetrics().height() + 6)
    header = view.horizontalHeader()
    header.setResizeContentsPrecision(RESIZE_ROWS)  # dag100k: 100k rows never measured
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setMinimumSectionSize(NAME_MIN)
    NameColumn(view, key, NAME_MIN)  # names: elided, or widened by hand
    header.setStretchLastSection(False)
    view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideLeft)  # a scope path's end names the node
    view.setItemDelegateForColumn(0, PathDelegate(view))  # ...and keeps the layer's number
    for column in view.caps:
        view.setItemDelegateForColumn(column, RightElided(view))  # "LayerNorm…"
    view.chooser = ColumnChooser(view, key.replace("name_width", "hidden_columns"), hidden)
    return view


class CostPanel(JobPanel):
    """Controls (dims, colour by, export), a summary, and the node and scope tables."""

    costRequested = Signal(str)  # the dims text, "batch=8, seq=128"
    colourChosen = Signal(str)  # a COST_METRICS key, or "none"
    nodeActivated = Signal(str)
    scopeActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CostPanel")
        self._path: Path | None = None
        self._result: ModelCost | None = None
        self._build()
        self._update_enabled()

    # -- public API -------------------------------------------------------------------
    def set_model(self, path: Path | None) -> None:
        self._path = path
        self.set_result(None)
        self.banner.hide()
        self._update_enabled()

    def set_result(self, cost: ModelCost | None) -> None:
        self._result = cost
        if cost is None:
            self.node_model.reset([])
            self.scope_model.reset([])
            self.summary.setText(NO_MODEL_TEXT if self._path is None else
                                 "Compute to count each node's MACs, parameters and memory")
        else:
            self.banner.hide()
            ranked = cost.ranked()
            by_macs = (2, Qt.SortOrder.DescendingOrder)
            self.node_model.reset(ranked, by_macs)
            self.node_view.horizontalHeader().setSortIndicator(*by_macs)
            tree_order = (-1, Qt.SortOrder.AscendingOrder)  # outer scopes before inner
            self.scope_model.reset(cost.scopes, tree_order)
            self.scope_view.horizontalHeader().setSortIndicator(*tree_order)
            self.summary.setText(summary_text(cost))
        self._update_enabled()

    def result(self) -> ModelCost | None:
        return self._result

    def chosen_cost(self) -> str:
        return str(self.colour_combo.currentData())

    def dims_text(self) -> str:
        return self.dims_edit.text()

    def export_csv(self, path: str | Path | None = None) -> Path | None:
        if self._result is None or self._path is None:
            return None
        if path is None:
            chosen, _ = QFileDialog.getSaveFileName(
                self, "Export cost table", str(self._path.with_suffix(".cost.csv")),
                "CSV files (*.csv);;All files (*)")
            if not chosen:
                return None
            path = chosen
        dest = Path(path)
        try:
            atomic_write(dest, self._result.to_csv(), protect=[self._path])
        except (OnnxStudioError, OSError) as exc:
            self.show_error(f"Could not export the cost table: {exc}")
            return None
        self.job.say(f"Saved {dest.name}")
        return dest

    # -- building ---------------------------------------------------------------------
    def _build(self) -> None:
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        self.dims_edit = QLineEdit()
        self.dims_edit.setPlaceholderText("batch=1, sequence=128")
        self.dims_edit.setToolTip("Sizes of symbolic dimensions (the rest count as 1)")
        self.colour_combo = QComboBox()
        self.colour_combo.addItem("No colours", NO_COLOUR)
        for key, (title, _unit) in COST_METRICS.items():
            self.colour_combo.addItem(title, key)
        self.colour_combo.setToolTip("Colour the graph by this cost (log scale; collapsed "
                                     "groups show their sum)")
        grid.addWidget(QLabel("Dimensions"), 0, 0)
        grid.addWidget(self.dims_edit, 0, 1)
        grid.addWidget(QLabel("Colour by"), 1, 0)
        grid.addWidget(self.colour_combo, 1, 1)
        lay.addLayout(grid)
        buttons = QHBoxLayout()
        self.compute_button = QPushButton("Compute")
        self.compute_button.setToolTip("Count the current model's costs with these sizes")
        self.export_button = QPushButton("Export CSV…")
        buttons.addWidget(self.compute_button)
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        lay.addLayout(buttons)
        lay.addWidget(self.job)
        self.summary = QLabel(NO_MODEL_TEXT)
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)

        self.node_model = NodeCostModel()
        self.scope_model = ScopeCostModel()
        # At a 480 px dock the seven columns left the names 67 px ("…/MatMul"): the
        # less-used two start hidden and the operator type stops at OP_TYPE_CAP
        self.node_view = table_view(self.node_model, "cost/node_name_width",
                                    hidden=("Element ops", "Memory"), caps={1: OP_TYPE_CAP})
        self.scope_view = table_view(self.scope_model, "cost/scope_name_width")
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.node_view, "Nodes")
        self.tabs.addTab(self.scope_view, "Scopes")
        self._frame(side, self.tabs)

        self.compute_button.clicked.connect(lambda: self.costRequested.emit(self.dims_text()))
        self.dims_edit.returnPressed.connect(lambda: self.costRequested.emit(self.dims_text()))
        self.export_button.clicked.connect(lambda: self.export_csv())
        self.colour_combo.currentIndexChanged.connect(
            lambda _i: self.colourChosen.emit(self.chosen_cost()))
        self.node_view.activated.connect(lambda i: self._activated(i, self.nodeActivated))
        self.scope_view.activated.connect(lambda i: self._activated(i, self.scopeActivated))

    @staticmethod
    def _activated(index: QModelIndex, signal: SignalInstance) -> None:
        key = str(index.data(ID_ROLE) or "")
        if key:
            signal.emit(key)

    def _update_enabled(self) -> None:
        self.compute_button.setEnabled(self._path is not None and not self.busy)
        self.export_button.setEnabled(self._result is not None)


def summary_text(cost: ModelCost) -> str:
    """Totals in two lines, then the assumptions about sizes."""
    peak = next((n for n in cost.nodes if n.id == cost.peak_node), None)
    where = f" at {peak.op_type} {peak.name or peak.id}" if peak else ""
    sizes = [a for a in cost.assumptions  # those about sizes, not about what is counted
             if a.startswith(("dimension", "shape inference")) or "value(s)" in a]
    return (f"{human_count(cost.macs)} MACs, {human_count(cost.element_ops)} element ops, "
            f"{human_count(cost.params)} parameters ({human_bytes(cost.weight_bytes)})\n"
            f"Activations written {human_bytes(cost.activation_bytes)}; peak alive "
            f"{human_bytes(cost.peak_activation_bytes)}{where}"
            + ("\nAssuming " + "; ".join(sizes) if sizes else ""))
