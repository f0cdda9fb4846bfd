"""A few spawned worker processes of this app, kept warm for work that pays in parallel
(the new units of one depth of an expanded layout: ``layout/batch.py``).

Spawned, never forked (the window cannot fork once Qt is loaded), so the same on
Windows and macOS. Jobs and replies are opaque bytes, framed on the worker's stdin and
stdout (``_HEAD``: kind, job id, length): the caller packs them (flat arrays, not lists
of tuples), so nothing here pickles. A worker keeps the lifeline pattern of every child
(``child.py``): its stdin is a pipe only this process holds, and when it closes (this
process ended, killed or not) the worker exits at once, mid-job or not.

Whatever goes wrong gives ``None`` for that job, never an exception: no pool (one core,
``ONNXSTUDIO_NO_FORK=1``, a worker that cannot start), a worker that died or timed out,
a job that raised, or a pool another thread is using. The caller then does the job in
its own process, with the same result.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import IO

from onnxstudio.concurrency.child import UNIT_POOL, child_command
from onnxstudio.concurrency.fork import NO_FORK

_HEAD = struct.Struct("<BIQ")  # kind, job id, payload length
JOB, CANCEL, DONE, FAILED = 1, 2, 3, 4
MAX_WORKERS = 4  # dag100k's biggest depth is 5 batches: more workers would idle
TIMEOUT_S = 600.0  # one job (256 units) takes about a second; a hung worker is killed
POLL_S = 0.05  # how often a waiting caller asks whether it was cancelled

Handler = Callable[[bytes, Callable[[], bool]], bytes]


class Cancelled(Exception):
    """The caller's ``cancel()`` turned true while its jobs ran: the workers were told to
    stop them and their replies are dropped."""


def size() -> int:
    """How many workers a pool gets: one per core, up to ``MAX_WORKERS``; 0 (no pool)
    on one core, where a worker only takes turns with this process."""
    cores = os.cpu_count() or 1
    return 0 if cores < 2 else min(cores, MAX_WORKERS)


def refusal() -> str | None:
    """Why no pool may start now, or None."""
    if os.environ.get(NO_FORK, "").strip().lower() not in ("", "0", "false", "no"):
        return f"{NO_FORK} is set"
    if size() == 0:
        return "this machine has one core"
    return None


def _read_exactly(stream: IO[bytes], n: int) -> bytes | None:
    data = stream.read(n)
    return data if data is not None and len(data) == n else None


def _read_frame(stream: IO[bytes]) -> tuple[int, int, bytes] | None:
    """One frame, or None at the end of the stream (or a frame cut short)."""
    head = _read_exactly(stream, _HEAD.size)
    if head is None:
        return None
    kind, job, length = _HEAD.unpack(head)
    payload = _read_exactly(stream, length) if length else b""
    return None if payload is None else (kind, job, payload)


class _Worker:
    """One worker process, and the thread that reads its replies into ``replies``."""

    def __init__(self, replies: queue.SimpleQueue[tuple[_Worker, int, int, bytes]]) -> None:
        self.process = subprocess.Popen(
            child_command(UNIT_POOL), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.job = -1  # the job it works on, or -1
        self.started = 0.0  # when it was given that job
        self._sending = threading.Lock()
        threading.Thread(target=self._read, args=(replies,), name="onnxstudio-unit-pool",
                         daemon=True).start()

    def _read(self, replies: queue.SimpleQueue[tuple[_Worker, int, int, bytes]]) -> None:
        assert self.process.stdout is not None
        while (frame := _read_frame(self.process.stdout)) is not None:
            replies.put((self, *frame))
        replies.put((self, FAILED, -1, b"the worker ended"))

    def send(self, kind: int, job: int, payload: bytes = b"") -> bool:
        """Whether the frame was written (False: the worker has ended)."""
        stdin = self.process.stdin
        if stdin is None:
            return False
        try:
            with self._sending:
                stdin.write(_HEAD.pack(kind, job, len(payload)))
                stdin.write(payload)
                stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and self.process.stdin is not None

    def kill(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # its lifeline: it exits on its own
            self.process.stdin = None
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.stdout is not None:
            self.process.stdout.close()


class Pool:
    """Workers started at once (they import in the background, ~0.3 s); :meth:`run`
    hands them jobs. One caller at a time: another thread's :meth:`run` meanwhile gets
    ``None`` for every job (its own process does them)."""

    def __init__(self, workers: int) -> None:
        self._replies: queue.SimpleQueue[tuple[_Worker, int, int, bytes]] = queue.SimpleQueue()
        self._busy = threading.Lock()
        self._next_job = 0
        self.workers: list[_Worker] = []
        for _ in range(workers):
            try:
                self.workers.append(_Worker(self._replies))
            except OSError:
                break

    @property
    def pids(self) -> list[int]:
        return [w.process.pid for w in self.workers if w.alive]

    def run(self, jobs: Sequence[bytes], cancel: Callable[[], bool] | None = None
            ) -> Iterator[tuple[int, bytes | None]]:
        """(index, reply) for each job as it completes, ``None`` when the pool could not
        do it; raises :class:`Cancelled` when ``cancel()`` turns true."""
        if not self._busy.acquire(blocking=False):
            yield from ((i, None) for i in range(len(jobs)))
            return
        try:
            yield from self._run(jobs, cancel)
        finally:
            self._busy.release()

    def _run(self, jobs: Sequence[bytes], cancel: Callable[[], bool] | None
             ) -> Iterator[tuple[int, bytes | None]]:
        todo = list(range(len(jobs)))[::-1]  # popped from the end: in order
        index: dict[int, int] = {}  # job id -> its index in jobs
        left = len(jobs)
        try:
            while left:
                for worker in self.workers:
                    while todo and worker.job < 0:
                        i = todo.pop()
                        self._next_job = job = self._next_job + 1
                        if worker.alive and worker.send(JOB, job, jobs[i]):
                            worker.job, worker.started, index[job] = job, time.monotonic(), i
                        else:
                            left -= 1
                            yield i, None
                if todo and not any(w.job >= 0 for w in self.workers):
                    left -= len(todo)
                    yield from ((i, None) for i in todo[::-1])
                    todo.clear()
                    continue
                if not left:
                    break
                reply = self._wait(cancel)
                if reply is None:
                    continue
                worker, kind, job, payload = reply
                if job == -1:  # the worker ended: its job (if any) fails
                    job = worker.job
                    if worker in self.workers:
                        self.workers.remove(worker)
                    worker.kill()
                if job != worker.job or job not in index:
                    continue  # an earlier, cancelled job's reply
                worker.job = -1
                left -= 1
                yield index.pop(job), payload if kind == DONE else None
        except BaseException:
            for worker in self.workers:
                if worker.job >= 0:
                    worker.send(CANCEL, worker.job)
                    worker.job = -1
            raise

    def _wait(self, cancel: Callable[[], bool] | None
              ) -> tuple[_Worker, int, int, bytes] | None:
        """The next reply; None after ``POLL_S`` without one (a worker over its time is
        killed then: its reader reports it ended)."""
        if cancel is not None and cancel():
            raise Cancelled
        try:
            return self._replies.get(timeout=POLL_S)
        except queue.Empty:
            now = time.monotonic()
            for worker in self.workers:
                if worker.job >= 0 and now - worker.started > TIMEOUT_S:
                    worker.process.kill()
            return None

    def close(self) -> None:
        """End every worker (closing its lifeline) and wait for it."""
        workers, self.workers = self.workers, []
        for worker in workers:
            worker.kill()


_POOL: list[Pool] = []  # the process' pool, once started
_LOCK = threading.Lock()


def warm() -> Pool | None:
    """The process' pool, started now if it was not (or lost workers since): call it
    before the work that needs it, so the workers' start is not on that work's path.
    None when :func:`refusal` says no."""
    if refusal() is not None:
        return None
    with _LOCK:
        if _POOL and len(_POOL[0].pids) == size():
            return _POOL[0]
        if _POOL and _POOL[0]._busy.locked():
            return _POOL[0]  # in use: topped up next time
        if _POOL:
            _POOL.pop().close()
        else:
            atexit.register(shutdown)
        pool = Pool(size())
        if not pool.workers:
            return None
        _POOL.append(pool)
        return pool


def started() -> Pool | None:
    """The process' pool if one was started (and has workers), else None: no start."""
    with _LOCK:
        return _POOL[0] if _POOL and _POOL[0].workers else None


def shutdown() -> None:
    """End the process' pool (at exit, and in tests)."""
    with _LOCK:
        while _POOL:
            _POOL.pop().close()


def serve(handle: Handler) -> int:
    """In a worker: answer each job with ``handle(payload, cancelled)`` until this
    process' stdin (its parent's lifeline) closes, which ends it at once. At the
    window's priority, not below it as onnxruntime's children run: this is the layout
    the window's own thread did before, which the user waits for (below it, the other
    programs of a loaded machine took the workers' cores: slower than one process).
    The window's thread only waits meanwhile."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print cannot corrupt the replies
    jobs: queue.SimpleQueue[tuple[int, bytes]] = queue.SimpleQueue()
    cancelled: set[int] = set()

    def read() -> None:
        stdin = sys.stdin.buffer
        while (frame := _read_frame(stdin)) is not None:
            kind, job, payload = frame
            if kind == CANCEL:
                cancelled.add(job)
            else:
                jobs.put((job, payload))
        os._exit(0)

    threading.Thread(target=read, name="onnxstudio-pool-lifeline", daemon=True).start()
    while True:
        job, payload = jobs.get()
        try:
            reply, kind = handle(payload, partial(cancelled.__contains__, job)), DONE
        except Exception as exc:  # the parent does this job itself
            reply, kind = f"{type(exc).__name__}: {exc}".encode(), FAILED
        cancelled.discard(job)
        out.write(_HEAD.pack(kind, job, len(reply)))
        out.write(reply)
        out.flush()
