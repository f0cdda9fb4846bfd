"""The run panel's progress line: a bar, Cancel, Benchmark with its run count, and the
status text under them."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from onnxstudio.ui.insight.run_choices import spin


class RunControls(QWidget):
    """Busy or idle: the bar spins while a run is under way and Cancel is the way out."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.setRange(0, 1)
        self.cancel_button = QPushButton("Cancel")
        self.bench_runs = spin(2, 10000, 20)
        self.bench_button = QPushButton("Benchmark")
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(self.bench_runs)
        row.addWidget(self.bench_button)
        lay.addLayout(row)
        self.status_label = QLabel("Ready")
        self.status_label.setWordWrap(True)
        lay.addWidget(self.status_label)

    def set_state(self, busy: bool, has_model: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.bench_button.setEnabled(has_model and not busy)
        if busy:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)

    def show_progress(self, message: str, done: int, total: int) -> None:
        self.status_label.setText(message)
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def say(self, text: str) -> None:
        self.status_label.setText(text)
