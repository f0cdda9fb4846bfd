"""The "Where it runs" dock: which execution provider and kernel run each node.

The panel picks a provider (those this installation offers) and an optimisation level,
asks through `placementRequested`, and shows the `Placement` it is handed: the share of
nodes (and of time, when the tab was profiled) per provider, the CPU fallbacks, and a
sortable node table. The session is created on a worker by `CostInsight`; this module
only reads onnxruntime's answer.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.formatting import plural
from onnxstudio.render.overlay import short_provider
from onnxstudio.runner.placement import NodePlacement, Placement, ProviderInfo
from onnxstudio.runner.session import OPTIMIZATION_LEVELS
from onnxstudio.ui.insight.cost_panel import ID_ROLE, table_view
from onnxstudio.ui.insight.job_panel import JobPanel
from onnxstudio.ui.widgets.tables import Column, RecordTableModel

NO_MODEL_TEXT = "Open a model to see which execution provider runs each node"
KERNEL_CAP = 160  # the Kernel column at most (px), cut at the right: "constant-folded at load"


class PlacementModel(RecordTableModel[NodePlacement]):
    aligned_headers = True
    columns = (
        Column("Node", lambda r: r.name or r.id, lambda r: (r.name or r.id).casefold()),
        Column("Provider", lambda r: short_provider(r.provider) if r.provider else "—",
               lambda r: r.provider or "~"),
        Column("Kernel", lambda r: r.kernel, lambda r: r.kernel.casefold()),
        Column("Op type", lambda r: r.op_type, lambda r: r.op_type.casefold()),
    )

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[str, str] = {}  # node id -> name, for the nodes a kernel absorbed

    def record_data(self, record: NodePlacement, column: int, role: int) -> object:
        if role == ID_ROLE:
            return record.owner or record.id
        if role == Qt.ItemDataRole.ToolTipRole:  # the cell is too narrow for a fused set
            absorbed = "".join(f"\n  {self.names.get(a, a)}" for a in record.absorbed)
            return f"{record.provider or 'not run'}: {record.kernel}" + \
                (f"\nabsorbs:{absorbed}" if absorbed else "")
        return None


class PlacementPanel(JobPanel):
    placementRequested = Signal(str, str)  # provider, optimisation level
    colourToggled = Signal(bool)
    nodeActivated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PlacementPanel")
        self._path: Path | None = None
        self._result: Placement | None = None
        self._build()
        self._update_enabled()

    def set_providers(self, providers: list[ProviderInfo]) -> None:
        self.provider_combo.clear()
        for p in providers:
            self.provider_combo.addItem(short_provider(p.name), p.name)
            if not p.usable:  # a plugin package onnxruntime has not registered
                item = self.provider_combo.model().index(self.provider_combo.count() - 1, 0)
                self.provider_combo.model().setData(item, 0, Qt.ItemDataRole.UserRole - 1)

    def set_model(self, path: Path | None) -> None:
        self._path = path
        self.set_result(None)
        self.banner.hide()

    def set_result(self, found: Placement | None, times_from: str = "") -> None:
        self._result = found
        if found is None:
            self.table.reset([])
            self.summary.setText(NO_MODEL_TEXT if self._path is None else
                                 "Find out creates an onnxruntime session and reads where it "
                                 "put each node")
        else:
            self.banner.hide()
            graph_order = (-1, Qt.SortOrder.AscendingOrder)  # no column: the file's order
            self.table.names = {n.id: n.name or n.id for n in found.nodes}
            self.table.reset(found.nodes, graph_order)
            self.view.horizontalHeader().setSortIndicator(*graph_order)
            self.summary.setText(summary_text(found, times_from))
        self._update_enabled()

    def result(self) -> Placement | None:
        return self._result

    def colour(self) -> bool:
        return self.colour_check.isChecked()

    def _build(self) -> None:
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        self.provider_combo = QComboBox()
        self.provider_combo.setToolTip("Asked for first; onnxruntime gives the CPU what "
                                       "it cannot run")
        self.optimization_combo = QComboBox()
        self.optimization_combo.addItems(list(OPTIMIZATION_LEVELS))
        self.optimization_combo.setCurrentText("all")
        grid.addWidget(QLabel("Provider"), 0, 0)
        grid.addWidget(self.provider_combo, 0, 1)
        grid.addWidget(QLabel("Optimisation"), 1, 0)
        grid.addWidget(self.optimization_combo, 1, 1)
        lay.addLayout(grid)
        buttons = QHBoxLayout()
        self.find_button = QPushButton("Find out")
        self.find_button.setToolTip("Create a session and read which provider and kernel "
                                    "run each node")
        buttons.addWidget(self.find_button)
        buttons.addStretch(1)
        lay.addLayout(buttons)
        self.colour_check = QCheckBox("Colour the graph by provider")
        self.colour_check.setChecked(True)
        lay.addWidget(self.colour_check)
        lay.addWidget(self.job)
        self.summary = QLabel(NO_MODEL_TEXT)
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)
        self.table = PlacementModel()
        # the kernel mostly repeats the operator type: that starts hidden, and a long
        # kernel name stops at KERNEL_CAP, so the node names keep their room
        self.view = table_view(self.table, "placement/name_width", hidden=("Op type",),
                               caps={2: KERNEL_CAP})
        self._frame(side, self.view)
        self.find_button.clicked.connect(
            lambda: self.placementRequested.emit(str(self.provider_combo.currentData()),
                                                 self.optimization_combo.currentText()))
        self.colour_check.toggled.connect(self.colourToggled)
        self.view.activated.connect(self._activated)

    def _activated(self, index: QModelIndex) -> None:
        key = str(index.data(ID_ROLE) or "")
        if key:
            self.nodeActivated.emit(key)

    def _update_enabled(self) -> None:
        self.find_button.setEnabled(self._path is not None and not self.busy)


def summary_text(found: Placement, times_from: str = "") -> str:
    """Nodes (and time) per provider, what did not run, the CPU fallbacks."""
    counts, whole = found.counts(), max(1, len(found.nodes))
    time_whole = sum(found.times.values()) or 1.0
    lines = []
    for provider, count in counts.most_common():
        line = f"{short_provider(provider)}: {plural(count, 'node')} ({100 * count / whole:.0f} %)"
        if provider in found.times:
            line += f", {100 * found.times[provider] / time_whole:.0f} % of the time"
        lines.append(line)
    if found.times and times_from:
        lines.append(f"(time from {times_from})")
    fused = [n for n in found.nodes if n.absorbed]
    if fused:
        lines.append(f"{plural(len(fused), 'kernel')} absorbed other nodes "
                     f"(e.g. {fused[0].kernel})")
    fallbacks = found.fallbacks()
    if found.requested != "CPUExecutionProvider":
        names = ", ".join(n.name or n.id for n in fallbacks[:5])
        lines.append(f"CPU fallbacks: {len(fallbacks)}" + (f" ({names}…)" if names else ""))
    return "\n".join(lines)
