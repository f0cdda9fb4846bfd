"""Free big results a slice at a time on a thread, not all in the turn that drops them.

An edit on dag100k after a profile and a comparison drops 100k profile rows, 100k
kernel times and 100k differences at once: freeing them took 80-130 ms of the GUI
thread in one turn (issue 34's stall table), and even copying their references to free
them later took 30-50 ms there (each record's count is a cache miss). ``release_later``
only queues what a panel or tab lets go of; a daemon thread takes the records out (the
items of their big lists and dicts, found through dataclasses) into a list of its own,
lets the containers go, and frees the records ``SLICE`` at a time, handing the GIL
back between slices. Whatever else still holds a result is untouched, so it is safe on
shared results. Plain data only (records, arrays): no Qt object may die off the GUI
thread.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from typing import Any

SLICE = 2048  # records freed per step: well under a millisecond
BIG = 256  # a list or dict this long is split into its items; shorter ones die whole
DEPTH = 4  # result -> derived dict -> tables -> rows

_queue: queue.SimpleQueue[object] = queue.SimpleQueue()
_lock = threading.Lock()
_state = {"pending": 0, "started": False}


def release_later(*objects: object) -> None:
    """Let go of ``objects``; their records are freed on the release thread."""
    for obj in objects:
        if obj is None:
            continue
        with _lock:
            _state["pending"] += 1
            if not _state["started"]:
                _state["started"] = True
                threading.Thread(target=_free_forever, name="onnxstudio-release",
                                 daemon=True).start()
        _queue.put(obj)


def pending() -> int:
    """Results queued or being freed (tests watch them go)."""
    with _lock:
        return _state["pending"]


def _free_forever() -> None:
    while True:
        obj = _queue.get()
        pieces: list[Any] = []
        _split(obj, pieces, DEPTH)
        del obj
        while pieces:
            del pieces[-SLICE:]
            time.sleep(0.0005)  # the GUI thread takes the GIL between slices
        with _lock:
            _state["pending"] -= 1


def _split(obj: object, pieces: list[Any], depth: int) -> None:
    if depth <= 0:
        pieces.append(obj)
    elif isinstance(obj, list | tuple) and len(obj) >= BIG:
        pieces.extend(obj)
    elif isinstance(obj, dict):
        if len(obj) >= BIG:
            pieces.extend(obj.keys())
            pieces.extend(obj.values())
        else:
            for value in obj.values():
                _split(value, pieces, depth - 1)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for value in vars(obj).values() if hasattr(obj, "__dict__") else ():
            _split(value, pieces, depth - 1)
    else:
        pieces.append(obj)
