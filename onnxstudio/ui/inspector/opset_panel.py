"""Opset panel: every operator the model uses with the version in force and the newest,
and "Convert to opset N…" (onnx's version converter) into a new file.

The conversion is a TaskRunner task. On success the panel shows an "Open it"
link that emits ``openConverted(path)``; failures are shown in the panel in words
(ConversionError's message), never as a traceback.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.convert import ConversionResult, convert_opset, default_target_path
from onnxstudio.model.graph import Model
from onnxstudio.model.operators import operator_rows
from onnxstudio.model.schemas import display_domain, newest_opset
from onnxstudio.ui.tasks import TaskRunner

COLUMNS = ["Operator", "Domain", "Count", "In force", "Newest", "Note"]
NOTE_COLOR = QColor("#b9770e")


class OpsetPanel(QWidget):
    """Dock content: opset imports, operator version table, conversion."""

    openConverted = Signal(str)  # the user asked to open the converted file
    converted = Signal(str)  # a conversion finished (path); for the status bar and tests
    conversionFailed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.last_result: ConversionResult | None = None
        self._converter = TaskRunner(self)
        self._converter.finished.connect(self._on_done)
        self._converter.failed.connect(self._on_failed)

        self.summary = QLabel("Open a model to see the operator versions it uses")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSortingEnabled(True)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setColumnWidth(1, 80)
        for column in (2, 3, 4):
            self.table.setColumnWidth(column, 54)
        header.setStretchLastSection(True)
        header.setMinimumSectionSize(40)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        self.target = QSpinBox()
        self.target.setRange(1, newest_opset(""))
        self.target.setValue(newest_opset(""))
        self.target.setPrefix("opset ")
        self.convert_button = QPushButton()
        self.convert_button.clicked.connect(self.convert_dialog)
        self.target.valueChanged.connect(self._update_button)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.linkActivated.connect(self._on_status_link)

        row = QHBoxLayout()
        row.addWidget(QLabel("Convert to"))
        row.addWidget(self.target)
        row.addWidget(self.convert_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self._update_button()

    # --- API -------------------------------------------------------------------

    def set_model(self, model: Model | None) -> None:
        self.model = model
        self.status.clear()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        if model is None:
            self.summary.setText("Open a model to see the operator versions it uses")
            self._update_button()
            return
        imports = ", ".join(f"{html.escape(display_domain(d))} <b>{v}</b>"
                            for d, v in sorted(model.opset_imports.items()))
        self.summary.setText(f"Imports {imports or 'no opsets'} · onnx knows ai.onnx up to "
                             f"<b>{newest_opset('')}</b>")
        rows = operator_rows(model)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [row["op_type"], row["domain"], row["count"],
                     row["since"] if row["since"] is not None else "—",
                     row["latest"] if row["latest"] is not None else "—", row["note"]]
            for c, value in enumerate(cells):
                item = QTableWidgetItem()
                item.setData(Qt.ItemDataRole.DisplayRole, value)
                item.setToolTip(str(value))
                if c in (2, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if c == 5 and value:
                    item.setForeground(QBrush(NOTE_COLOR))
                if c == 4 and isinstance(row["since"], int) and isinstance(value, int) \
                        and value > row["since"]:
                    item.setForeground(QBrush(NOTE_COLOR))
                    item.setToolTip(f"A newer version of {row['op_type']} exists: v{value}")
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.resizeColumnToContents(1)  # "com.microsoft" whole, not "com.micr…"
        self.target.setValue(newest_opset(""))  # the usual wish: bring the model up to date
        self._update_button()

    def table_rows(self) -> list[list[str]]:
        """The table as displayed (tests read it)."""
        return [[item.text() if (item := self.table.item(r, c)) else ""
                 for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]

    def convert_dialog(self) -> None:
        """Ask for a new file name, then convert in the background."""
        if self.model is None:
            return
        opset = self.target.value()
        suggested = default_target_path(self.model.path, opset)
        path, _ = QFileDialog.getSaveFileName(
            self, f"Save the model converted to opset {opset}", str(suggested),
            "ONNX model (*.onnx)")
        if not path:
            return
        destination = Path(path)
        # QFileDialog has already asked before replacing an existing file.
        overwrite = destination.exists()
        data = destination.with_name(destination.name + ".data")
        if self.model.external_data and data.exists():
            answer = QMessageBox.question(
                self, "Replace weights file?",
                f"{data.name} already exists. Replace it with the converted model's weights?")
            if answer != QMessageBox.StandardButton.Yes:
                return
            overwrite = True
        self.start_conversion(opset, destination, overwrite=overwrite)

    def start_conversion(self, opset: int, destination: Path, *, overwrite: bool = False) -> None:
        if self.model is None:
            return
        self.convert_button.setEnabled(False)
        self.status.setText(f"Converting to opset {opset}…")
        source = self.model.path
        self._converter.start(
            lambda _context: convert_opset(source, opset, destination, overwrite=overwrite))

    # --- internals -----------------------------------------------------------------

    def _update_button(self) -> None:
        self.convert_button.setText("Convert…")  # the box beside it names the opset;
        # the whole sentence made the Opsets dock 314 px wide at least, widening the window
        convertible = self.model is not None and "" in self.model.opset_imports
        self.convert_button.setEnabled(convertible)
        self.convert_button.setToolTip(
            "Write a copy of the model converted with onnx's version converter"
            if convertible or self.model is None else
            "The model imports no ai.onnx opset, so there is nothing to convert")

    def _on_done(self, result: ConversionResult) -> None:
        self.last_result = result
        self._update_button()
        self.status.setText(
            f"Saved <b>{html.escape(result.path.name)}</b> (opset {result.source_opset} → "
            f"{result.target_opset}). <a href='open'>Open it</a>")
        self.converted.emit(str(result.path))

    def _on_failed(self, message: str) -> None:
        self._update_button()
        self.status.setText(f"<span style='color:#c0392b;'>⚠ {html.escape(message)}</span>")
        self.conversionFailed.emit(message)

    def _on_status_link(self, link: str) -> None:
        if link == "open" and self.last_result is not None:
            self.openConverted.emit(str(self.last_result.path))
