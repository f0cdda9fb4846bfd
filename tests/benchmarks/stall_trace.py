"""Where the window froze: a thread that samples the GUI thread's stack while its event
loop is late, to find the work a stall column charges to an action.

``ONNXSTUDIO_TRACE_STALLS=MS python -m tests.benchmarks.run bert12`` (any MS > 0) makes
every ``_Ticker.run`` of the benchmark trace: while no tick came for MS milliseconds the
thread takes every thread's stack every millisecond, and once the loop runs again prints
the stall's length and its most sampled stacks to stderr. A stack innermost in a Qt call
means C++ work under that Python line (PySide drops the GIL for it, so the sample is
taken); a stall with no samples at all is C++ work holding the GIL, or another thread
holding it.

Stacks are read with ``faulthandler.dump_traceback``, which walks the interpreter's
frames in C without making frame objects. ``sys._current_frames()`` made one for every
frame of every thread, and while the sampler walked them (letting the GIL go between
lines) a returning frame handed its locals to that object: a paint event's ``QPainter``
outlived the event ("QBackingStore::endPaint() called with active painter") and was
freed later on the sampling thread, and the benchmark crashed (SIGSEGV in a collection,
"Cannot destroy paint device that is being painted").
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import linecache
import os
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import IO

ENV = "ONNXSTUDIO_TRACE_STALLS"
FRAMES = 14  # innermost frames kept per sample
TOP = 3  # stacks printed per stall
OTHER_FRAMES = 4  # innermost frames kept of the other threads


_THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)")
_FRAME = re.compile(r'^  File "(.*)", line (\d+) in (.*)$')

Frame = tuple[str, int, str]  # file, line, function


def parse_dump(text: str) -> dict[int, list[Frame]]:
    """Each thread's frames, outermost first, from ``faulthandler.dump_traceback``'s text."""
    threads: dict[int, list[Frame]] = {}
    frames: list[Frame] = []
    for line in text.splitlines():
        if head := _THREAD.match(line):
            frames = threads.setdefault(int(head.group(1), 16), [])
        elif frame := _FRAME.match(line):
            frames.insert(0, (frame.group(1), int(frame.group(2)), frame.group(3)))
    return threads


def _lines(frames: list[Frame], count: int) -> tuple[str, ...]:
    return tuple(f"{os.path.relpath(name)}:{line} {function}: "
                 f"{linecache.getline(name, line).strip()}"
                 for name, line, function in frames[-count:])


def threshold_ms() -> float:
    """The tracing threshold from ``ONNXSTUDIO_TRACE_STALLS`` (0: off)."""
    try:
        return float(os.environ.get(ENV, "0") or 0)
    except ValueError:
        return 0.0


class StallTracer:
    """Samples the main thread's stack while ``last_tick()`` is over ``limit_ms`` old."""

    def __init__(self, last_tick: Callable[[], float], limit_ms: float, label: str) -> None:
        self._last_tick, self._limit = last_tick, limit_ms / 1000.0
        self._label = label
        self._main = threading.main_thread().ident
        self._clock = time.pthread_getcpuclockid(self._main or 0)
        self._task = f"/proc/self/task/{threading.main_thread().native_id}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stall-trace", daemon=True)
        self._files = contextlib.ExitStack()
        self._dump: IO[bytes] = io.BytesIO()  # a file from __enter__ on

    def __enter__(self) -> StallTracer:
        self._dump = self._files.enter_context(tempfile.TemporaryFile())
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._files.close()

    def _sample(self, others: Counter[tuple[str, ...]]) -> tuple[str, ...] | None:
        """The main thread's stack; each other thread's innermost frames go to ``others``
        (a worker inside one C call all along, holding the GIL, stalls the loop too)."""
        self._dump.seek(0)
        self._dump.truncate()
        faulthandler.dump_traceback(self._dump, all_threads=True)  # in C, GIL held
        self._dump.seek(0)
        threads = parse_dump(self._dump.read().decode(errors="replace"))
        me = threading.get_ident()
        for ident, frames in threads.items():
            if ident not in (me, self._main) and frames and not frames[-1][0].endswith(
                    "threading.py"):  # idle threads wait there
                others[_lines(frames, OTHER_FRAMES)] += 1
        main = threads.get(self._main or 0)
        return None if main is None else (*_lines(main, FRAMES), self._state())

    def _state(self) -> str:
        """What the kernel says the GUI thread does: R running or waiting for a core, S
        sleeping in ``wchan`` (futex: a lock, the GIL among them)."""
        try:
            with open(f"{self._task}/stat") as stat:
                state = stat.read().rpartition(")")[2].split()[0]
            with open(f"{self._task}/wchan") as wchan:
                return f"[kernel: {state} {wchan.read().strip()}]"
        except OSError:
            return "[kernel: ?]"

    def _watch(self) -> None:
        samples: Counter[tuple[str, ...]] = Counter()
        others: Counter[tuple[str, ...]] = Counter()
        began = cpu = 0.0
        while not self._stop.wait(0.001):
            late = time.perf_counter() - self._last_tick()
            if late > self._limit:
                if not began:
                    began, cpu = self._last_tick(), time.clock_gettime(self._clock)
                stack = self._sample(others)
                if stack is not None:
                    samples[stack] += 1
            elif began:
                self._report(time.perf_counter() - began,
                             time.clock_gettime(self._clock) - cpu, samples, others)
                samples, others, began = Counter(), Counter(), 0.0

    def _report(self, seconds: float, cpu: float, samples: Counter[tuple[str, ...]],
                others: Counter[tuple[str, ...]]) -> None:
        """The stall, the GUI thread's CPU time in it (well under the stall: waiting on
        the GIL or for a core) and its most sampled stacks."""
        total = sum(samples.values())
        lines = [f"--- stall {seconds * 1000:.0f} ms (GUI thread CPU >= {cpu * 1000:.0f} "
                 f"ms) during {self._label} ({total} samples)"]
        for stack, count in samples.most_common(TOP):
            lines.append(f"  {count} samples:")
            lines.extend(f"    {line}" for line in stack)
        for stack, count in others.most_common(TOP):
            lines.append(f"  other thread, {count} samples:")
            lines.extend(f"    {line}" for line in stack)
        print("\n".join(lines), file=sys.stderr, flush=True)
