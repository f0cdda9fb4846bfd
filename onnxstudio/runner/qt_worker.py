"""The one Qt bridge of the runner: a QObject worker on a QThread that owns the session.

Pattern (Orange3 concurrent.py / superqt thread workers): the GUI-thread `RunController`
numbers each request; submitting a new one cancels the running one (RunOptions.terminate)
and results of an older number are dropped, so the user sees the newest answer only.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from onnxstudio.errors import describe_failure, user_message
from onnxstudio.runner.folder import FolderRequest, FolderRow, run_folder
from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunOutcome, RunRequest
from onnxstudio.runner.session import (
    OPTIMIZATION_LEVELS,
    RunCancelled,
    SessionConfig,
    available_providers,
)

__all__ = ["OPTIMIZATION_LEVELS", "FolderRequest", "FolderRow", "ImageSource", "RunController",
           "RunOutcome", "RunRequest", "SessionConfig", "available_providers"]


class _Worker(QObject):
    """Lives on the worker thread; every slot runs there."""

    started = Signal(int)
    progress = Signal(int, str, int, int)
    row = Signal(int, object)
    finished = Signal(int, object)
    failed = Signal(int, str)
    cancelled = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.pipeline = Pipeline()
        self.latest = 0  # written by the GUI thread; an int store is atomic under the GIL

    @Slot(int, object)
    def process(self, generation: int, request: RunRequest | FolderRequest) -> None:
        if generation != self.latest:  # superseded while queued
            self.cancelled.emit(generation)
            return
        self.started.emit(generation)

        def report(message: str, done: int, total: int) -> None:
            self.progress.emit(generation, message, done, total)
            if generation != self.latest:
                self.pipeline.cancel()

        try:
            if isinstance(request, FolderRequest):
                outcomes: object = self._folder(generation, request, report)
            else:
                outcomes = self.pipeline.execute(request, report)
        except RunCancelled:
            self.cancelled.emit(generation)
        except Exception as exc:  # the words come from the one mapping in errors.py
            message = describe_failure(exc)
            if user_message(exc) is None:  # a bug: still report it, keep the thread alive
                traceback.print_exc()
                model = request.request.model if isinstance(request, FolderRequest) else \
                    request.model
                message = f"{model.name}: {message}"
            self.failed.emit(generation, message)
        else:
            if generation == self.latest:
                self.finished.emit(generation, outcomes)
            else:
                self.cancelled.emit(generation)

    def _folder(self, generation: int, job: FolderRequest,
                report: Callable[[str, int, int], None]) -> list[FolderRow]:
        """Rows one by one (each reported as it finishes); the list at the end."""
        rows: list[FolderRow] = []
        total = len(job.items)
        report(f"Running {total} images…", 0, total)
        for row in run_folder(self.pipeline, job.request, job.items,
                              cancelled=lambda: generation != self.latest,
                              thumbnails=job.thumbnails):
            rows.append(row)
            self.row.emit(generation, row)
            report(f"{len(rows)} of {total}: {row.item.name}", len(rows), total)
        if generation != self.latest:
            raise RunCancelled("cancelled")
        return rows


class RunController(QObject):
    """GUI-side handle: submit(), cancel(), shutdown(); signals carry only current results."""

    started = Signal()
    progress = Signal(str, int, int)  # message, done, total (total 0: indeterminate)
    row = Signal(object)  # FolderRow, as each image of a folder run finishes
    finished = Signal(object)  # list[RunOutcome], or list[FolderRow] for a FolderRequest
    failed = Signal(str)  # a message naming the model/file and the reason
    cancelled = Signal()
    busyChanged = Signal(bool)
    _submit = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._busy = False
        self._thread = QThread()
        self._thread.setObjectName("onnxstudio-runner")
        self._worker = _Worker()
        self._worker.moveToThread(self._thread)
        self._thread.finished.connect(self._worker.deleteLater)
        self._submit.connect(self._worker.process)
        self._worker.started.connect(self._on_started)
        self._worker.progress.connect(self._on_progress)
        self._worker.row.connect(self._on_row)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        self._thread.start()
        app = QCoreApplication.instance()
        if app is not None:  # never leave a running QThread behind at exit
            app.aboutToQuit.connect(self.shutdown)

    @property
    def busy(self) -> bool:
        return self._busy

    def submit(self, request: RunRequest | FolderRequest) -> int:
        """Start a run; a run still in progress is cancelled and its result dropped."""
        self._generation += 1
        self._worker.latest = self._generation
        self._worker.pipeline.cancel()
        self._set_busy(True)
        self._submit.emit(self._generation, request)
        return self._generation

    def cancel(self) -> None:
        """Stop the current run; nothing from it will be reported except `cancelled`."""
        if not self._busy:
            return
        self._generation += 1
        self._worker.latest = self._generation
        self._worker.pipeline.cancel()
        self._set_busy(False)
        self.cancelled.emit()

    def release(self, model: Path) -> None:
        """``model``'s tab closed: end the process hosting its session, if any."""
        self._worker.pipeline.hosts.release(model)

    def shutdown(self, timeout_ms: int = 10000) -> None:
        """Cancel, stop the thread and wait for it (call before the owner goes away)."""
        self._worker.pipeline.hosts.close()
        if not self._thread.isRunning():
            return
        self._generation += 1
        self._worker.latest = self._generation
        self._worker.pipeline.cancel()
        self._thread.quit()
        self._thread.wait(timeout_ms)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)

    @Slot(int)
    def _on_started(self, generation: int) -> None:
        if generation == self._generation:
            self.started.emit()

    @Slot(int, str, int, int)
    def _on_progress(self, generation: int, message: str, done: int, total: int) -> None:
        if generation == self._generation:
            self.progress.emit(message, done, total)

    @Slot(int, object)
    def _on_row(self, generation: int, row: object) -> None:
        if generation == self._generation:
            self.row.emit(row)

    @Slot(int, object)
    def _on_finished(self, generation: int, outcomes: object) -> None:
        if generation == self._generation:
            self._set_busy(False)
            self.finished.emit(outcomes)

    @Slot(int, str)
    def _on_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self._set_busy(False)
            self.failed.emit(message)

    @Slot(int)
    def _on_cancelled(self, generation: int) -> None:
        if generation == self._generation:  # cancelled from inside (not by cancel())
            self._set_busy(False)
            self.cancelled.emit()
