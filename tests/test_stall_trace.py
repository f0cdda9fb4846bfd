"""The benchmark's stall tracer reads other threads' stacks without keeping their locals."""

from __future__ import annotations

import linecache
import threading
import time
import weakref
from collections import Counter
from typing import Any

import pytest

from tests.benchmarks.stall_trace import StallTracer, parse_dump


class _Local:
    """A local that must die when its function returns (a paint event's QPainter)."""


def _waiting(started: threading.Event, release: threading.Event,
             refs: list[weakref.ref[_Local]]) -> None:
    """A worker's frame the tracer samples while it waits, holding a local."""
    local = _Local()
    refs.append(weakref.ref(local))
    started.set()
    while not release.is_set():
        time.sleep(0.001)


def test_a_sampled_frame_returning_mid_sample_frees_its_locals(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker returns while the sample is being read (the sampler lets the GIL go
    between lines): its local dies then, not when the sampler is done. Frame objects
    from ``sys._current_frames()`` kept a paint event's QPainter alive past the event,
    and the benchmark crashed freeing it on the sampling thread."""
    started, release, returned = threading.Event(), threading.Event(), threading.Event()
    refs: list[weakref.ref[_Local]] = []
    alive_after_return: list[bool] = []
    getline = linecache.getline

    def worker() -> None:
        _waiting(started, release, refs)
        returned.set()

    def slow_getline(name: str, line: int, *args: Any) -> str:
        if not alive_after_return:  # the first line read: let the worker return meanwhile
            release.set()
            returned.wait(30)
            alive_after_return.append(refs[0]() is not None)
        return getline(name, line, *args)

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(30)
    monkeypatch.setattr(linecache, "getline", slow_getline)
    try:
        # its own thread never samples: every tick is now
        with StallTracer(time.perf_counter, 1000.0, "test") as tracer:
            others: Counter[tuple[str, ...]] = Counter()
            main = tracer._sample(others)
    finally:
        release.set()
        thread.join()
    assert alive_after_return == [False]
    assert any(" _waiting: " in line for stack in others for line in stack)
    assert main is not None and "test_a_sampled_frame_returning" in " ".join(main)


def test_parse_dump_reads_threads_outermost_first() -> None:
    text = ('Thread 0x00007f00000000aa (most recent call first):\n'
            '  File "/a/inner.py", line 3 in inner\n'
            '  File "/a/outer.py", line 9 in outer\n\n'
            'Current thread 0x00007f00000000bb (most recent call first):\n'
            '  File "/a/me.py", line 1 in <module>\n')
    assert parse_dump(text) == {
        0x7F00000000AA: [("/a/outer.py", 9, "outer"), ("/a/inner.py", 3, "inner")],
        0x7F00000000BB: [("/a/me.py", 1, "<module>")]}
