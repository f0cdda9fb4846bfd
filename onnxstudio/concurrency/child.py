"""How the app starts a child process of itself (shape inference, a window's profile,
onnxruntime's optimised graph, the checks after an edit).

A frozen app (PyInstaller) is its own executable; an installed one runs ``-m onnxstudio``
with the interpreter running it now. Either way the child's first argument names a
hidden command, which ``cli.main`` hands to ``run_child`` before any parser.

A child started by :class:`Child` holds the read end of a pipe as its stdin, whose
write end only the parent holds: when the parent ends, killed or not, the child sees
the pipe close, removes its job folder and exits (spawned processes, so Windows too).
The same pipe carries the lines a long-lived child is sent (:meth:`Child.send`): the
child finds them in :data:`INCOMING`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

INFER_SHAPES = "_infer-shapes"
PROFILE = "_profile"
OPTIMISE = "_optimise"
CHECK_EDIT = "_check-edit"
SESSION_HOST = "_session-host"
INSPECT = "_inspect"
UNIT_POOL = "_unit-pool"
# command -> the module whose child_main(argv) runs it, imported only in the child
_MODULES = {INFER_SHAPES: "onnxstudio.model.infer_child",
            PROFILE: "onnxstudio.runner.profile_child",
            OPTIMISE: "onnxstudio.runner.optimised",
            CHECK_EDIT: "onnxstudio.runner.edit_check",
            SESSION_HOST: "onnxstudio.runner.session_host",
            INSPECT: "onnxstudio.runner.inspect_child",
            UNIT_POOL: "onnxstudio.layout.pool_worker"}
WATCH = "ONNXSTUDIO_CHILD_FOLDER"  # set for a Child: its folder, or empty
INCOMING: queue.SimpleQueue[str] = queue.SimpleQueue()  # in a child: the lines sent to it


def child_command(command: str, *args: str) -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, command, *args]
    return [sys.executable, "-m", "onnxstudio", command, *args]


class Child:
    """The hidden ``command`` running in a child process; ``folder`` (its job's files)
    is removed by the child if this process dies first, and by :meth:`kill` here."""

    def __init__(self, command: str, *args: str, folder: Path | None = None,
                 stdout: int = subprocess.PIPE, stderr: int | IO[str] = subprocess.PIPE
                 ) -> None:
        self.folder = folder
        env = dict(os.environ, **{WATCH: str(folder or "")})
        self.process = subprocess.Popen(
            child_command(command, *args), stdin=subprocess.PIPE, stdout=stdout,
            stderr=stderr, text=True, env=env)
        # Held here, written only by send(): communicate() would close it, and the child
        # with it.
        self._lifeline, self.process.stdin = self.process.stdin, None
        self._sending = threading.Lock()  # whole lines, whichever thread sends
        self.stopped = False  # stop() was called: the job was cancelled

    @classmethod
    def start(cls, command: str, *args: str, folder: Path, failed: Callable[[OSError], Exception],
              kill_on: Callable[[Callable[[], None]], object] | None = None,
              stderr: int | IO[str] = subprocess.PIPE) -> Child:
        """A job's child: a start that fails raises ``failed(error)`` (the caller's one
        line, and its clean-up), and ``kill_on`` (a cancel token's ``watch``) is handed
        the child's kill."""
        try:
            child = cls(command, *args, folder=folder, stderr=stderr)
        except OSError as exc:
            raise failed(exc) from exc
        if kill_on is not None:
            kill_on(child.stop)
        return child

    def stop(self) -> None:
        """End the child now, from any thread (a task's cancel, on the GUI thread): only
        a signal, so it never waits; the thread waiting on the child (``communicate``,
        ``follow``) sees it end and cleans up, and can tell by ``stopped``."""
        self.stopped = True
        if self.process.poll() is None:
            with contextlib.suppress(OSError):  # it ended meanwhile
                self.process.kill()

    def send(self, line: str) -> None:
        """Hand ``line`` (no newline in it) to the child's :data:`INCOMING`; OSError when
        the child has ended."""
        with self._sending:
            if self._lifeline is None:
                raise BrokenPipeError("the child's pipe is closed")
            self._lifeline.write(line + "\n")
            self._lifeline.flush()

    def communicate(self, timeout: float) -> tuple[str, str]:
        """The child's stdout and stderr once it has ended; after ``timeout`` seconds it
        is killed and subprocess.TimeoutExpired raised."""
        try:
            out, err = self.process.communicate(timeout=timeout)
        except BaseException:
            self.kill()
            raise
        self._close_lifeline()
        return out or "", err or ""

    def follow(self, on_line: Callable[[str], None], timeout: float) -> None:
        """Hand each line of the child's stdout to ``on_line`` until it ends; after
        ``timeout`` seconds it is killed and subprocess.TimeoutExpired raised. Its stderr
        must go to a file (a full pipe nobody reads would stall it)."""
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            self.process.kill()

        timer = threading.Timer(timeout, expire)
        timer.start()
        try:
            assert self.process.stdout is not None
            with self.process.stdout as lines:
                for line in lines:
                    on_line(line)
            self.process.wait()
        except BaseException:
            self.kill()
            raise
        finally:
            timer.cancel()
        self._close_lifeline()
        if expired.is_set():
            raise subprocess.TimeoutExpired(self.process.args, timeout)

    def kill(self) -> None:
        """End the child (if it runs), close its pipes and remove its folder."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()  # unread pipes would leak two file handles per kill
        self._close_lifeline()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _close_lifeline(self) -> None:
        with self._sending:
            if self._lifeline is not None:
                with contextlib.suppress(OSError):  # the child ended, a line unread
                    self._lifeline.close()
                self._lifeline = None


def _watch_parent(folder: str) -> None:
    """In the child: once stdin, the parent's lifeline, closes, remove ``folder`` and
    exit, whatever the child is doing (a killed window leaves nothing running). Each
    whole line read before then goes to :data:`INCOMING`."""
    def watch() -> None:
        pending = b""
        try:
            while chunk := os.read(0, 65536):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    INCOMING.put(line.decode("utf-8", "replace"))
        except OSError:
            pass
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
        os._exit(1)

    threading.Thread(target=watch, name="onnxstudio-parent-watch", daemon=True).start()


BELOW_WINDOW = 5  # the niceness a compute child adds to its own


def below_window() -> None:
    """In a compute child: run below the window's priority (Unix ``nice``). onnxruntime
    keeps a thread busy on every core; at the window's priority they starved its event
    loop of a core on a loaded machine (gaps of 100-600 ms with no work of its own)."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(BELOW_WINDOW)


def run_child(argv: list[str]) -> int | None:
    """Run the hidden command ``argv`` names; None when it names none."""
    module = _MODULES.get(argv[0]) if argv else None
    if module is None:
        return None
    folder = os.environ.pop(WATCH, None)
    if folder is not None:  # started by Child
        _watch_parent(folder)
    code: int = importlib.import_module(module).child_main(argv[1:])
    return code
