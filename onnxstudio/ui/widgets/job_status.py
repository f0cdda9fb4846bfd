"""A background job's strip in a dock panel: an indeterminate bar with Cancel beside it
while the job runs, and one line saying what is happening or what happened.

Escape cancels too, while the focus is anywhere in the panel the strip serves (``scope``),
and only while a job runs, so Escape keeps its other meanings the rest of the time.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

CANCELLED = "Cancelled"  # the run panel's word for it


class JobStatus(QWidget):
    """Hidden while there is nothing to say; ``cancelRequested`` on Cancel or Escape."""

    cancelRequested = Signal()

    def __init__(self, scope: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._busy = False
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(10)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this job (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                        QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress, 1, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status_label)
        self._escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), scope, self.cancel,
                                 context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.set_busy(False)

    @property
    def busy(self) -> bool:
        return self._busy

    def set_busy(self, busy: bool, message: str = "") -> None:
        """Bar and Cancel while ``busy``; ``message`` says what runs (or how it ended)."""
        self._busy = busy
        self.progress.setRange(0, 0)  # sweeping until the job says how far it is
        for part in (self.progress, self.cancel_button):
            part.setVisible(busy)
        self.cancel_button.setEnabled(busy)
        self._escape.setEnabled(busy)
        self.say(message)

    def show_progress(self, message: str, fraction: float) -> None:
        """How far the job is (0..1): the bar stops sweeping and fills."""
        if self._busy:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(max(0.0, min(1.0, fraction)) * 1000))
            self.say(message)

    def say(self, message: str) -> None:
        self.status_label.setText(message)
        self.status_label.setVisible(bool(message))
        self.setVisible(self._busy or bool(message))  # no empty gap in the panel

    def message(self) -> str:
        return self.status_label.text() if self.status_label.isVisibleTo(self) else ""

    def cancel(self) -> None:
        if self._busy:
            self.cancelRequested.emit()
