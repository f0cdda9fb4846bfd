"""Free big results a slice per event-loop turn, not all in the turn that drops them.

An edit on dag100k after a profile and a comparison drops 100k profile rows, 100k
kernel times and 100k differences at once: freeing them took 100-130 ms of the GUI
thread in one turn (issue 34's stall table). ``release_later`` takes the results a
panel or tab lets go of and keeps their records (the items of their big lists and
dicts, found through dataclasses) in a list of its own; whatever else still holds them
is untouched, so it is safe on shared results. The containers then die at once, which
costs only decrefs, and the records die ``SLICE`` at a time, one slice per timer tick.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QCoreApplication, QTimer

SLICE = 2048  # records freed per tick: ~1 ms of the GUI thread
BIG = 256  # a list or dict this long is split into its items; shorter ones die whole
DEPTH = 4  # result -> derived dict -> tables -> rows

_kept: list[Any] = []
_timer: QTimer | None = None


def release_later(*objects: object) -> None:
    """Let go of ``objects``, their big lists' records freed over the next turns."""
    pieces: list[Any] = []
    for obj in objects:
        _split(obj, pieces, DEPTH)
    if len(pieces) <= SLICE:
        return  # freeing them now is as cheap as a tick
    _kept.extend(pieces)
    timer = _tick_timer()
    if timer is not None and not timer.isActive():
        timer.start()


def pending() -> int:
    """Records still waiting to be freed (tests watch them go)."""
    return len(_kept)


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


def _tick_timer() -> QTimer | None:
    global _timer
    app = QCoreApplication.instance()
    if app is None:  # no event loop to spread it over: free now
        _kept.clear()
        return None
    if _timer is None:
        _timer = QTimer(app)
        _timer.setInterval(0)
        _timer.timeout.connect(_free_slice)
    return _timer


def _free_slice() -> None:
    del _kept[-SLICE:]
    if not _kept and _timer is not None:
        _timer.stop()
