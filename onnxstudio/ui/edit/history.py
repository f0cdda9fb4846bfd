"""The edit history dock: every edit by name (click one to go back to it) and the checks."""

from __future__ import annotations

from PySide6.QtGui import QUndoGroup
from PySide6.QtWidgets import QLabel, QUndoView, QVBoxLayout, QWidget

from onnxstudio.model.edit import CheckReport


class HistoryPanel(QWidget):
    """QUndoView over the active tab's stack, and what onnx's checks said last."""

    def __init__(self, group: QUndoGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = QUndoView(group)
        self.view.setEmptyLabel("Original model")
        self.view.setAlternatingRowColors(True)
        self.checks = QLabel()
        self.checks.setWordWrap(True)
        self.checks.setContentsMargins(6, 4, 6, 4)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.view, 1)
        box.addWidget(self.checks)
        self.show_report(None)

    def show_report(self, report: CheckReport | None, edits: int = 0) -> None:
        if report is None or edits == 0:
            self.checks.setText("No edits. Right-click a node, edge, input or output, or "
                                "double-click a value in the Node or Model panel.")
            self.checks.setStyleSheet("color: palette(placeholder-text);")
            return
        if report.errors:
            self.checks.setText("✖ Cannot be saved: " + report.errors[0])
            self.checks.setStyleSheet("color: #c0392b;")
        elif report.cannot_run:
            self.checks.setText("⚠ The checks pass, but onnxruntime cannot run it: "
                                + report.cannot_run)
            self.checks.setStyleSheet("color: #c0392b;")
        elif report.warnings:
            self.checks.setText("⚠ Checks passed with warnings: " + "; ".join(report.warnings))
            self.checks.setStyleSheet("color: #b9770e;")
        else:
            self.checks.setText("✔ onnx checker and shape inference pass")
            self.checks.setStyleSheet("color: #1e8449;")
