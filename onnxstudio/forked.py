"""Run one piece of work in a forked copy of this process, collect its result later.

For one-shot commands (the CLI's export) on a multi-core machine: the fork starts at
once with everything already loaded and built (no interpreter start, no second read of
the model, which made a spawned child no faster), works on its copy while this process
goes on, and hands back a picklable result through a pipe. Never use it where threads
other than the caller's do Python or Qt work (the window): only the calling thread
lives on in the fork.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


_EXITING: set[int] = set()  # forks that delivered their result, not reaped yet


def _reap() -> None:
    """Reap the delivered forks that have exited by now (the others stay listed)."""
    for pid in list(_EXITING):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:  # reaped elsewhere
            done = True
        if done:
            _EXITING.discard(pid)


class ForkFailed(Exception):
    """The forked work raised, crashed or was killed: it has no result."""


class Forked(Generic[T]):
    """``work()`` running in a fork from construction on; :meth:`result` waits for it.

    Where there is no fork (Windows) or it fails, ``result`` runs ``work`` here instead.
    """

    def __init__(self, work: Callable[[], T]) -> None:
        self._work: Callable[[], T] | None = work
        self._pid = self._fd = -1
        if not hasattr(os, "fork"):
            return
        _reap()
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
        fd, self._fd = self._fd, -1
        with os.fdopen(fd, "rb") as pipe:
            data = pipe.read()
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
