"""The one worker mechanism of the window: run a function off the GUI thread, keep only
the newest, report progress, finished, failed; cancel.

Every background job (open, layout, convert, weights, profile, compare, capture,
run-part, export) is a TaskRunner task. Each owner has a TaskRunner; starting a task
cancels the previous one and bumps a generation counter, so a stale result arriving late
is dropped rather than shown (the Orange3 pattern DESIGN.md describes). Cancelling sets
the task's ``CancelToken``: layout and export poll it, and runner calls given
``context.token`` terminate their onnxruntime runs. A task stopped this way raises
``onnxstudio.errors.Cancelled`` (or a subclass), which is never reported as a failure.
The window cancels its runners and waits for the pool when it closes.
"""

from __future__ import annotations

import sys
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from onnxstudio.concurrency.collector import quiet_collector
from onnxstudio.errors import Cancelled, describe_failure, user_message
from onnxstudio.runner.cancel import CancelToken

PROGRESS_S = 0.1


class TaskContext:
    """Handed to the task function: report progress, ask whether to stop."""

    def __init__(self, signals: _Signals, generation: int) -> None:
        self._signals = signals
        self._generation = generation
        self.token = CancelToken()  # hand it to runner calls so cancel reaches onnxruntime
        self._reported = ("", -1.0)  # the last stage reported, and when

    def cancel(self) -> None:
        self.token.cancel()

    def cancelled(self) -> bool:
        return self.token.cancelled

    def check(self) -> None:
        self.token.check()

    def progress(self, stage: str, fraction: float) -> None:
        """Report a new stage at once, the same stage's fraction at most every
        PROGRESS_S: a layout reporting every few units queued dozens of progress-bar
        repaints, and queued calls run before the event loop's timers (BERT-96's
        first open starved them for 200 ms)."""
        now = time.monotonic()
        last_stage, last_time = self._reported
        if stage == last_stage and now - last_time < PROGRESS_S:
            return
        self._reported = (stage, now)
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
        self._fn: Callable[[TaskContext], Any] | None = fn
        self._context, self._signals = context, signals
        self._generation, self._quiet_gc = generation, quiet_gc

    def run(self) -> None:
        # Taken out of the runnable: its Python wrapper may outlive the run, and with it
        # whatever the function holds (the minimap's closure held a closed tab's painter).
        fn, self._fn = self._fn, None
        if fn is None:
            return
        with quiet_collector(self._quiet_gc):  # no full collection over a build
            try:
                result = fn(self._context)
            except Cancelled:
                return
            except Exception as exc:  # the words come from the one mapping in errors.py
                if user_message(exc) is None:  # a bug: report it rather than kill the window
                    traceback.print_exc()
                self._signals.failed.emit(self._generation, describe_failure(exc))
                return
            finally:
                self._context.token.release()
        if not self._context.cancelled():
            self._signals.finished.emit(self._generation, result)


GIL_SWITCH_S = 0.0002


def _share_the_gil() -> None:
    """Tasks are mostly Python, holding the GIL; after every Qt call that releases it the
    GUI thread waits up to the switch interval to get it back (5 ms by default, so a
    handler making a hundred such calls froze the window for up to half a second while a
    layout ran). At 0.2 ms the window keeps up (a progress update while dag100k was
    read froze it for 135 ms at 1 ms, 85 ms at 0.2), at no cost measurable in the open."""
    if sys.getswitchinterval() > GIL_SWITCH_S:
        sys.setswitchinterval(GIL_SWITCH_S)


NEXT_TURN_MS = 10


class TaskRunner(QObject):
    """Runs one task at a time for its owner; the newest task wins."""

    progress = Signal(str, float)
    finished = Signal(object)
    failed = Signal(str)
    busyChanged = Signal(bool)

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
            _share_the_gil()
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
        _started.add(self)
        self.busyChanged.emit(True)
        return self._generation

    def cancel(self) -> None:
        if self._context is not None:
            self._context.cancel()
            self._context = None
            self.busyChanged.emit(False)

    def _current(self, generation: int) -> bool:
        return generation == self._generation and self._context is not None

    def _on_progress(self, generation: int, stage: str, fraction: float) -> None:
        if self._current(generation):
            self.progress.emit(stage, fraction)

    def _on_finished(self, generation: int, result: object) -> None:
        if self._current(generation):
            self._context = None
            self.busyChanged.emit(False)
            self.finished.emit(result)

    def _on_failed(self, generation: int, message: str) -> None:
        if self._current(generation):
            self._context = None
            self.busyChanged.emit(False)
            self.failed.emit(message)

    @classmethod
    def wait_all(cls, msecs: int = 30000) -> bool:
        """Block until every task finished (tests and shutdown)."""
        return cls.pool().waitForDone(msecs)

    @classmethod
    def stop_all(cls, owner: QObject, msecs: int = 5000) -> bool:
        """Cancel every runner under ``owner`` and wait for the pool (closing a window):
        no worker outlives the window or writes after it is gone."""
        for runner in owner.findChildren(TaskRunner):
            runner.cancel()
        return cls.wait_all(msecs)


_started: weakref.WeakSet[TaskRunner] = weakref.WeakSet()


def any_busy() -> bool:
    """Whether any live runner has a task running (the benchmark's test that the window
    is quiet: finding a window's runners among its 1,900 children took 5 ms of the GUI
    thread a check, 20-30 ms while a worker ran Python, which its stall columns counted)."""
    return any(shiboken6.isValid(r) and r.busy for r in list(_started))


def next_turn(receiver: QObject, fn: Callable[[], Any], turns: int = 1) -> None:
    """Call ``fn`` in a later turn of the event loop, after the paints and input waiting
    now, unless ``receiver`` is deleted first. Parts of one piece of work (a model
    landing: the graph's paint, the panels, the minimap) each get a turn of their own:
    one job per ``NEXT_TURN_MS`` timer, in order. (A 0 ms single shot is a posted event,
    and whatever is posted in one turn runs back to back in the next.) With ``turns``
    above one, that many turns later: after what the next turn's work posts as well."""
    if turns > 1:
        _turns.append((receiver, lambda: next_turn(receiver, fn, turns - 1)))
    else:
        _turns.append((receiver, fn))
    timer = _turn_timer()
    if not timer.isActive():
        timer.start()


_turns: deque[tuple[QObject, Callable[[], Any]]] = deque()
_timer: QTimer | None = None


def _turn_timer() -> QTimer:
    global _timer
    if _timer is None:
        _timer = QTimer()
        _timer.setSingleShot(True)
        _timer.setInterval(NEXT_TURN_MS)
        _timer.timeout.connect(_next_job)
    return _timer


def _next_job() -> None:
    try:
        while _turns:
            receiver, fn = _turns.popleft()
            if shiboken6.isValid(receiver):
                fn()
                break
    finally:
        if _turns:
            _turn_timer().start()
