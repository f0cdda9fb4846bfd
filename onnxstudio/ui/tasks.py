"""Background tasks for the window: run a function off the GUI thread, keep only the newest.

Each owner has a TaskRunner; starting a task cancels the previous one (cooperatively)
and bumps a generation counter, so a stale result arriving late is dropped rather than
shown (the Orange3 pattern DESIGN.md describes).
"""

from __future__ import annotations

import gc
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from onnxstudio.errors import describe_failure, user_message


class Cancelled(Exception):
    """Raised inside a task when its owner cancelled it."""


class TaskContext:
    """Handed to the task function: report progress, ask whether to stop."""

    def __init__(self, signals: _Signals, generation: int) -> None:
        self._signals = signals
        self._generation = generation
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

    def progress(self, stage: str, fraction: float) -> None:
        self._signals.progress.emit(self._generation, stage, float(fraction))


class _Signals(QObject):
    progress = Signal(int, str, float)
    finished = Signal(int, object)
    failed = Signal(int, str)


class _Runnable(QRunnable):
    def __init__(self, fn: Callable[[TaskContext], Any], context: TaskContext,
                 signals: _Signals, generation: int, quiet_gc: bool) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._fn, self._context, self._signals = fn, context, signals
        self._generation, self._quiet_gc = generation, quiet_gc

    def run(self) -> None:
        # Building a big graph allocates ~1M objects; a full collection of them holds
        # the GIL for 150 ms+ and freezes the window. Collect nothing while building,
        # then freeze the survivors so later collections never rescan them.
        if self._quiet_gc:
            gc.disable()
        try:
            result = self._fn(self._context)
        except Cancelled:
            return
        except Exception as exc:  # the words come from the one mapping in errors.py
            if user_message(exc) is None:  # a bug: report it rather than kill the window
                traceback.print_exc()
            self._signals.failed.emit(self._generation, describe_failure(exc))
            return
        finally:
            if self._quiet_gc:
                gc.freeze()
                gc.enable()
        if not self._context.cancelled():
            self._signals.finished.emit(self._generation, result)


class TaskRunner(QObject):
    """Runs one task at a time for its owner; the newest task wins."""

    progress = Signal(str, float)
    finished = Signal(object)
    failed = Signal(str)
    busy_changed = Signal(bool)

    _pool: QThreadPool | None = None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._signals = _Signals()
        self._signals.progress.connect(self._on_progress)
        self._signals.finished.connect(self._on_finished)
        self._signals.failed.connect(self._on_failed)
        self._generation = 0
        self._context: TaskContext | None = None

    @classmethod
    def pool(cls) -> QThreadPool:
        if cls._pool is None:
            cls._pool = QThreadPool()
            # one thread may wait seconds on a shape-inference child: keep two for work
            cls._pool.setMaxThreadCount(max(3, QThreadPool.globalInstance().maxThreadCount()))
        return cls._pool

    @property
    def busy(self) -> bool:
        return self._context is not None

    def start(self, fn: Callable[[TaskContext], Any], quiet_gc: bool = False) -> int:
        self.cancel()
        self._generation += 1
        self._context = TaskContext(self._signals, self._generation)
        self.pool().start(_Runnable(fn, self._context, self._signals, self._generation,
                                    quiet_gc))
        self.busy_changed.emit(True)
        return self._generation

    def cancel(self) -> None:
        if self._context is not None:
            self._context.cancel()
            self._context = None
            self.busy_changed.emit(False)

    def _current(self, generation: int) -> bool:
        return generation == self._generation and self._context is not None

    def _on_progress(self, generation: int, stage: str, fraction: float) -> None:
        if self._current(generation):
            self.progress.emit(stage, fraction)

    def _on_finished(self, generation: int, result: object) -> None:
        if self._current(generation):
            self._context = None
            self.busy_changed.emit(False)
            self.finished.emit(result)

    def _on_failed(self, generation: int, message: str) -> None:
        if self._current(generation):
            self._context = None
            self.busy_changed.emit(False)
            self.failed.emit(message)

    @classmethod
    def wait_all(cls, msecs: int = 30000) -> bool:
        """Block until every task finished (tests and shutdown)."""
        return cls.pool().waitForDone(msecs)
