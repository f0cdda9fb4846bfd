"""What the Profile and Compare docks share: an error banner on top, their controls beside
(a wide dock) or above (a narrow one) their results, and a job strip with Cancel.

The panels only ask for work (their own request signal) and show what they are handed;
`RunInsight` runs the job as a task and cancels it through its `TaskRunner` when the
panel emits ``cancelRequested``.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.job_status import CANCELLED, JobStatus
from onnxstudio.ui.widgets.responsive import SideBySide


class JobPanel(QWidget):
    """Base of a dock panel that starts one background job at a time."""

    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.banner = ErrorBanner()
        self.job = JobStatus(self, self)  # Escape works anywhere in the panel
        self.job.cancelRequested.connect(self._cancel)

    def _frame(self, side: QWidget, main: QWidget) -> SideBySide:
        """Banner on top, then ``side`` (controls) and ``main`` (results) side by side."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        outer.addWidget(self.banner)
        self.layout_switch = SideBySide(side, main)
        outer.addWidget(self.layout_switch, 1)
        return self.layout_switch

    @property
    def busy(self) -> bool:
        return self.job.busy

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the job runs: the bar, Cancel (and Escape) and ``message``."""
        self.job.set_busy(busy, message)
        self._update_enabled()

    def show_progress(self, message: str, fraction: float) -> None:
        """A job that knows how far it is: a determinate bar (a profile's runs)."""
        self.job.show_progress(message, fraction)

    def status_text(self) -> str:
        """What the job strip says ("" when it says nothing)."""
        return self.job.message()

    def show_error(self, message: str) -> None:
        """Non-modal: a banner at the top; the controls stay usable."""
        self.banner.show_message(message)

    def error_text(self) -> str:
        return self.banner.message()

    def _cancel(self) -> None:
        self.cancelRequested.emit()  # the runner stops the task; its answer never lands
        self.set_busy(False, CANCELLED)

    def _update_enabled(self) -> None:
        """Enable the panel's own buttons for the current state."""
