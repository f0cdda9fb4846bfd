"""File → Merge Models…: a split's stages back into one model, or two models joined.

The window's face of ``onnxstudio merge``: the same core functions run as a task (reading
and writing gigabytes must not freeze the window), and the merged model opens in a tab.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.ui.tasks import TaskContext, TaskRunner

TITLE = "Merge Models"


class MergeDialog(QDialog):
    """Stages folder, or models A and B with their connections; then the new file."""

    merged = Signal(str)  # the written model's path
    failed = Signal(str)

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._done)
        self.runner.failed.connect(self._failed)
        layout = QVBoxLayout(self)
        self.stages_mode = QRadioButton("Stages written by Split into Stages (manifest.json)")
        self.two_mode = QRadioButton("Two models: B's inputs fed by A's outputs")
        self.stages_mode.setChecked(True)
        form = QFormLayout()
        self.folder = self._path_row(form, "Stages folder:", folder=True)
        self.model_a = self._path_row(form, "Model A:")
        self.model_b = self._path_row(form, "Model B:")
        self.connect_edit = QLineEdit()
        self.connect_edit.setPlaceholderText("A_OUTPUT=B_INPUT, …")
        form.addRow("Connections:", self.connect_edit)
        self.out = self._path_row(form, "Write to:", save=True)
        layout.addWidget(self.stages_mode)
        layout.addWidget(self.two_mode)
        layout.addLayout(form)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.merge_button = QPushButton("Merge")
        buttons.addButton(self.merge_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.merge_button.clicked.connect(self.start)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.stages_mode.toggled.connect(self._mode)
        for edit in (self.folder, self.model_a, self.model_b, self.out, self.connect_edit):
            edit.textChanged.connect(self._mode)
        self._mode()

    def _path_row(self, form: QFormLayout, label: str, folder: bool = False,
                  save: bool = False) -> QLineEdit:
        edit = QLineEdit()
        browse = QPushButton("Browse…")

        def choose() -> None:
            if folder:
                path = QFileDialog.getExistingDirectory(self, label)
            elif save:
                path = QFileDialog.getSaveFileName(self, label, "", "ONNX (*.onnx)")[0]
            else:
                path = QFileDialog.getOpenFileName(self, label, "", "ONNX (*.onnx)")[0]
            if path:
                edit.setText(path)

        browse.clicked.connect(choose)
        row = QHBoxLayout()
        row.addWidget(edit)
        row.addWidget(browse)
        form.addRow(label, row)
        return edit

    def _mode(self) -> None:
        """Only the chosen mode's fields are editable; Merge says what is missing."""
        stages = self.stages_mode.isChecked()
        self.folder.setEnabled(stages)
        for edit in (self.model_a, self.model_b, self.connect_edit):
            edit.setEnabled(not stages)
        needed = [self.folder] if stages else [self.model_a, self.model_b, self.connect_edit]
        missing = [e for e in (*needed, self.out) if not e.text().strip()]
        self.merge_button.setEnabled(not missing and not self.runner.busy)
        self.merge_button.setToolTip("Fill in every field first" if missing else "")

    def start(self) -> None:
        """Merge on a worker; the result opens in a tab (through ``merged``)."""
        from onnxstudio.model.merge import merge_stages, merge_two, write_merged

        out = Path(self.out.text().strip()).expanduser()
        if self.stages_mode.isChecked():
            folder = Path(self.folder.text().strip()).expanduser()
            sources = [p for p in folder.glob("stage_*.onnx*")] if folder.is_dir() else []

            def work(_context: TaskContext) -> str:
                write_merged(merge_stages(folder), out, sources)
                return str(out)
        else:
            a = Path(self.model_a.text().strip()).expanduser()
            b = Path(self.model_b.text().strip()).expanduser()
            pairs = [p.strip() for p in self.connect_edit.text().split(",") if p.strip()]

            def work(_context: TaskContext) -> str:
                merged, _note = merge_two(a, b, pairs)
                write_merged(merged, out, [a, b, a.with_name(f"{a.name}.data"),
                                           b.with_name(f"{b.name}.data")])
                return str(out)

        self.merge_button.setEnabled(False)
        self.status.setText("Merging…")
        self.runner.start(work)

    def _done(self, path: str) -> None:
        self.status.setText(f"Wrote {path}.")
        self._mode()
        self.merged.emit(path)

    def _failed(self, message: str) -> None:
        self.status.setText(message)
        self._mode()
        self.failed.emit(message)
