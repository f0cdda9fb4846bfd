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
        _, status = os.waitpid(self._pid, 0)
        self._pid = -1
        if status != 0 or not data:
            raise ForkFailed(f"the forked process ended with status {status}")
        result: T = pickle.loads(data)
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
