"""Model → Split into Stages…: plan N pipeline stages, see them on the canvas, then write.

Nothing is written until the user asks: the plan (core: ``model/split.py``) is made on a
worker whenever the count or the cost changes, each stage is coloured on the canvas with
the handed-over tensors marked as the cut lines, and a bar per stage shows the balance.
"Write Stages…" writes ``stage_k.onnx`` and ``manifest.json`` into a chosen folder and
checks the chain against the whole model, both on a worker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model import Model
from onnxstudio.model.formatting import human_bytes
from onnxstudio.render.overlay import OverlayData, stage_fill, stages_overlay
from onnxstudio.ui.tasks import TaskContext, TaskRunner

if TYPE_CHECKING:  # the planner's modules load on its worker, not as the dialog opens
    from onnxstudio.model.split import CostKind, SplitPlan

TITLE = "Split into Stages"
COSTS: tuple[tuple[CostKind, str, str], ...] = (
    ("params", "Weights", "equal bytes of weights per stage (memory per device)"),
    ("flops", "Compute", "equal estimated operations per stage (Conv, MatMul, Gemm by "
                         "multiply-adds; other operators by output size)"),
    ("time", "Time", "equal measured time per stage, from the last Profile Run"),
)
Preview = Callable[[OverlayData | None, set[str], Any], None]
"""Colours the canvas by stage and marks the handed-over tensors (None: clear); the third
argument is what ``Fold`` made of the colours, or None."""
Fold = Callable[[OverlayData], Any]
"""Folds the stages' colours into the canvas' layout, on the planner's worker (on the
GUI thread that took dag100k's plan 160-180 ms)."""
Times = Callable[[], Mapping[int, float]]
"""A profile's time per node index, asked for on the planner's worker (the "Time" cost)."""


def _stage_overlay(model: Model, plan: SplitPlan) -> OverlayData:
    stages = []
    for stage in plan.stages:
        share = stage.cost / plan.total_cost if plan.total_cost else 0.0
        stages.append(([model.graph.nodes[i].id for i in stage.nodes],
                       f"{stage.number}: {share:.0%}",
                       f"Stage {stage.number} of {len(plan.stages)}: {share:.1%} of the "
                       f"{plan.by}, {len(stage.nodes):,} nodes"))
    return stages_overlay(stages, f"{len(plan.stages)} stages by {plan.by}")


def handed_over(plan: SplitPlan) -> set[str]:
    """The tensors that cross a cut: the canvas marks their edges as the cut lines."""
    return {i.name for stage in plan.stages for i in stage.inputs if i.stage is not None}


class SplitDialog(QDialog):
    """Choose N and the cost; the plan shows at once; write only on request."""

    planned = Signal(object)  # SplitPlan
    written = Signal(object)  # (WrittenSplit, ChainCheck)
    failed = Signal(str)

    def __init__(self, parent: QWidget | None, model: Model, preview: Preview,
                 times: Times | None = None, fold: Fold | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.model, self.preview = model, preview
        self.times = cache(times) if times is not None else None  # made once, if asked
        self.fold = fold
        self.plan: SplitPlan | None = None
        self.planner = TaskRunner(self)
        self.planner.finished.connect(self._show_plan)
        self.planner.failed.connect(self._plan_failed)
        self.writer = TaskRunner(self)
        self.writer.finished.connect(self._written)
        self.writer.failed.connect(self._write_failed)
        self._build()
        self.replan()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # never squashed
        form = QFormLayout()
        self.stages_spin = QSpinBox()
        self.stages_spin.setRange(2, 16)
        self.stages_spin.setValue(4)
        self.stages_spin.valueChanged.connect(self.replan)
        self.cost_combo = QComboBox()
        for kind, label, tip in COSTS:
            self.cost_combo.addItem(label, kind)
            self.cost_combo.setItemData(self.cost_combo.count() - 1, tip, 3)  # ToolTipRole
        if self.times is None:  # "Time" needs a profile of this model
            item = self.cost_combo.model().item(2)  # type: ignore[attr-defined]
            item.setEnabled(False)
            item.setToolTip("Run → Profile Run first: time per node comes from a profile")
        self.cost_combo.currentIndexChanged.connect(self.replan)
        form.addRow("Stages:", self.stages_spin)
        form.addRow("Balance:", self.cost_combo)
        layout.addLayout(form)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Stage", "Share", "Nodes", "Weights", "Fed from"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table)
        self.summary = QLabel("Planning…")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.write_button = QPushButton("Write Stages…")
        self.write_button.setEnabled(False)
        buttons.addButton(self.write_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.write_button.clicked.connect(self.choose_folder)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(680, 320)

    def cost(self) -> CostKind:
        kind: CostKind = self.cost_combo.currentData()
        return kind

    def replan(self) -> None:
        model, count, cost, times = self.model, self.stages_spin.value(), self.cost(), self.times
        fold = self.fold
        self.write_button.setEnabled(False)
        self.summary.setText("Planning…")

        def work(_context: TaskContext) -> tuple[SplitPlan, OverlayData, Any]:
            from onnxstudio.model.split import plan_split

            plan = plan_split(model, count, cost,
                              times() if times is not None and cost == "time" else None)
            colours = _stage_overlay(model, plan)
            return plan, colours, fold(colours) if fold is not None else None

        self.planner.start(work)

    def _show_plan(self, planned: tuple[SplitPlan, OverlayData, Any]) -> None:
        plan, colours, folded = planned
        self.plan = plan
        self.table.setRowCount(len(plan.stages))
        for row, stage in enumerate(plan.stages):
            share = stage.cost / plan.total_cost if plan.total_cost else 0.0
            name = QTableWidgetItem(f"  {stage.number}  ")
            name.setBackground(QColor(stage_fill(stage.number)))
            name.setForeground(QColor("#1a1a1a"))
            self.table.setItem(row, 0, name)
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setValue(round(share * 1000))
            bar.setFormat(f"{share:.1%}")
            self.table.setCellWidget(row, 1, bar)
            self.table.setItem(row, 2, QTableWidgetItem(f"{len(stage.nodes):,}"))
            self.table.setItem(row, 3, QTableWidgetItem(human_bytes(stage.params)))
            fed = ", ".join(sorted({i.source for i in stage.inputs}))
            item = QTableWidgetItem(fed)
            item.setToolTip("\n".join(f"{i.name} ← {i.source}" for i in stage.inputs))
            self.table.setItem(row, 4, item)
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(rows + self.table.horizontalHeader().height()
                                  + 2 * self.table.frameWidth())
        handed = ", ".join(human_bytes(b) for b in plan.cut_bytes)
        self.summary.setText(
            f"The costliest stage is {plan.imbalance:.2f}× the ideal share. Handed over "
            f"at the cuts (symbolic dimensions counted as 1): {handed}. The cut tensors "
            "are marked on the canvas; nothing is written until you ask.")
        refusal = plan.unwritable(self.model)
        self.write_button.setEnabled(refusal is None)
        self.write_button.setToolTip(refusal or "")
        if refusal is not None:
            self.summary.setText(f"{self.summary.text()}\n\nCannot be written: {refusal}.")
        self.preview(colours, handed_over(plan), folded)
        self.planned.emit(plan)

    def _plan_failed(self, message: str) -> None:
        self.plan = None
        self.table.setRowCount(0)
        self.summary.setText(message)
        self.preview(None, set(), None)

    def choose_folder(self) -> None:
        start = str(Path(self.model.path).with_name(f"{Path(self.model.path).stem}_stages"))
        folder = QFileDialog.getExistingDirectory(self, "Folder for the stages", start)
        if folder:
            self.write_to(Path(folder))

    def write_to(self, folder: Path) -> None:
        """Write the shown plan into ``folder`` and check the chain, on a worker."""
        from onnxstudio.runner.inspect_child import window_write_stages

        plan, model = self.plan, self.model
        if plan is None:
            return
        self.write_button.setEnabled(False)
        self.summary.setText(f"Writing {len(plan.stages)} stages to {folder} and checking "
                             "them against the whole model…")

        def work(_context: TaskContext) -> tuple[Any, Any]:
            return window_write_stages(model, plan, folder)

        self.writer.start(work)

    def _written(self, answer: tuple[Any, Any]) -> None:
        written, check = answer
        self.write_button.setEnabled(True)
        self.summary.setText(f"Wrote {len(written.files)} stages and manifest.json to "
                             f"{written.folder}. {check.describe()[0].upper()}"
                             f"{check.describe()[1:]}.")
        self.written.emit(answer)
        if not self.isVisible():
            return
        box = QMessageBox(QMessageBox.Icon.Information if check.ok else
                          QMessageBox.Icon.Warning, TITLE, self.summary.text(), parent=self)
        open_folder = box.addButton("Open Folder", QMessageBox.ButtonRole.ActionRole)
        box.addButton(QMessageBox.StandardButton.Close)
        box.exec()
        if box.clickedButton() is open_folder:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(written.folder)))

    def _write_failed(self, message: str) -> None:
        self.write_button.setEnabled(True)
        self.summary.setText(message)
        self.failed.emit(message)
        if self.isVisible():
            QMessageBox.warning(self, TITLE, message)

    def done(self, result: int) -> None:
        self.preview(None, set(), None)  # the canvas is the user's again
        super().done(result)
