"""Run one piece of work in a forked copy of this process, collect its result later.

For one-shot commands (the CLI's export) on a multi-core machine: the fork starts at
once with everything already loaded and built (no interpreter start, no second read of
the model, which made a spawned child no faster), works on its copy while this process
goes on, and hands back a picklable result through a pipe. This is the only module
that forks (see the package's contract): where forking is refused (:func:`refusal`)
the work runs in this process when its result is asked for, with the same result.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

NO_FORK = "ONNXSTUDIO_NO_FORK"
TIMEOUT_S = 600.0  # no fork's work here takes a minute; a hung one is killed after this

_EXITING: set[int] = set()  # forks that delivered their result, not reaped yet
_LIFE: list[int] = []  # this process' life pipe (read, write): see _watch_parent


def refusal() -> str | None:
    """Why this process must not fork now, or None when it may.

    A fork keeps only the calling thread: Qt's threads and locks, and any other
    thread's, are copied mid-flight (macOS aborts such forks outright)."""
    if os.environ.get(NO_FORK, "").strip().lower() not in ("", "0", "false", "no"):
        return f"{NO_FORK} is set"
    if not hasattr(os, "fork"):
        return "this platform has no fork"
    if "PySide6" in sys.modules:
        return "Qt is loaded"
    if threading.active_count() > 1:
        return "other threads are running"
    return None


def may_fork() -> bool:
    return refusal() is None


def _reap() -> None:
    """Reap the delivered forks that have exited by now (the others stay listed)."""
    for pid in list(_EXITING):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:  # reaped elsewhere
            done = True
        if done:
            _EXITING.discard(pid)


def _life_pipe() -> tuple[int, int]:
    """The pipe whose write end only this process holds (made once; not inherited by
    programs it starts): a fork sees it close when this process ends, however."""
    if not _LIFE:
        _LIFE.extend(os.pipe())
    return _LIFE[0], _LIFE[1]


def _watch_parent(life: tuple[int, int]) -> None:
    """In the fork: end it as soon as its parent is gone (the life pipe reads EOF), so a
    killed command leaves no fork working, or blocked on a pipe, behind it."""
    read, write = life
    os.close(write)
    _LIFE.clear()  # a fork of this fork gets a pipe of its own

    def watch() -> None:
        while os.read(read, 1):
            pass
        os._exit(1)

    threading.Thread(target=watch, name="onnxstudio-parent-watch", daemon=True).start()


class ForkFailed(Exception):
    """The forked work raised, crashed, was killed or timed out: it has no result."""


class Forked(Generic[T]):
    """``work()`` running in a fork from construction on; :meth:`result` waits for it.

    Where forking is refused or fails, ``result`` runs ``alone`` (default: ``work``)
    here instead; give ``alone`` when ``work`` uses something only a fork has (a
    pipe's end). ``timeout``: seconds ``result`` waits before it kills the fork.
    """

    def __init__(self, work: Callable[[], T], *, alone: Callable[[], T] | None = None,
                 timeout: float = TIMEOUT_S) -> None:
        self._work: Callable[[], T] | None = alone or work
        self._pid = self._fd = -1
        self._timeout = timeout
        if not may_fork():
            return
        _reap()
        life = _life_pipe()
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the fork: work, write, and leave without any cleanup of the parent's
            code = 1
            try:
                os.close(read)
                _watch_parent(life)
                _write_all(write, pickle.dumps(work(), pickle.HIGHEST_PROTOCOL))
                os.close(write)  # the result is complete now, not when the exit is
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._fd, self._work = pid, read, None

    @property
    def running(self) -> bool:
        """Whether the work runs in a fork (else ``result`` will run it here)."""
        return self._pid > 0

    def result(self) -> T:
        """The work's return value; ForkFailed if the fork did not deliver one."""
        if self._work is not None:
            work, self._work = self._work, None
            return work()
        if self._pid < 0:
            raise ForkFailed("the work was cancelled or already collected")
        data = self._read()
        pid, self._pid = self._pid, -1
        if not data:
            _, status = os.waitpid(pid, 0)
            raise ForkFailed(f"the forked process ended with status {status}")
        # A fork as big as this process takes 15 ms to exit after its result is written
        # (its memory unmapped): it is reaped later, not waited for.
        _EXITING.add(pid)
        _reap()
        try:
            result: T = pickle.loads(data)
        except Exception as exc:  # cut short: the fork died while writing it
            raise ForkFailed("the forked process ended before its whole result") from exc
        return result

    def _read(self) -> bytes:
        """Everything the fork writes, until it closes its end; killed at the timeout."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + self._timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                self.cancel()
                raise ForkFailed(f"the forked work gave no result in {self._timeout:g} s")
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                os.close(self._fd)
                self._fd = -1
                return b"".join(chunks)
            chunks.append(chunk)

    def cancel(self) -> None:
        """Stop the work (if it runs) and forget it."""
        if self._fd >= 0:
            os.close(self._fd)
        if self._pid > 0:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        self._pid = self._fd = -1
        self._work = None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
