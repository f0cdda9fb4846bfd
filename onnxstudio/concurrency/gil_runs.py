"""Bulk work in C, cut into runs short enough that other threads get the GIL between;
big structures freed piece by piece for the same reason (``dismantle``); and a hand-over
for loops of Qt calls (``let_others_run``).

Mapping, counting or converting 100k items in one C call (``numpy.fromiter`` over a
chain of C iterators, ``Counter``, ``list(map(...))``) never reaches the interpreter's
switch point: on a worker it held the GIL 25-40 ms at a time and froze the window. In
runs of ``RUN`` items each call takes 2-3 ms, and the Python between them lets the GUI
thread in, at no measurable cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any, TypeVar

import numpy as np

RUN = 8192
T = TypeVar("T")


def fromiter_in_runs(items: Iterable[Any], dtype: Any, count: int) -> np.ndarray:
    """``numpy.fromiter(items, dtype, count)``, ``RUN`` items per call."""
    it = iter(items)
    out = np.empty(count, dtype=dtype)
    for start in range(0, count, RUN):
        out[start:start + RUN] = np.fromiter(islice(it, RUN), dtype, min(RUN, count - start))
    return out


def list_in_runs(items: Iterable[T]) -> list[T]:
    """``list(items)``, ``RUN`` items per call."""
    it = iter(items)
    out: list[T] = []
    while True:
        size = len(out)
        out += islice(it, RUN)
        if len(out) - size < RUN:
            return out


def filter_in_runs(keep: Callable[[T], Any], items: Sequence[T]) -> list[T]:
    """``list(filter(keep, items))``, ``RUN`` items per call: a filter that keeps few
    items runs over all of them in one call (``list_in_runs`` counts what it keeps)."""
    return [item for start in range(0, len(items), RUN)
            for item in filter(keep, items[start:start + RUN])]


def dismantle(*parts: object) -> None:
    """Free a finished build piece by piece. Dropped at once, a big build's objects go in
    one chain of deallocations that holds the GIL (0.2 s after laying out expanded
    dag100k on a worker, while the window waited); emptied here, Python code runs between
    the pieces and other threads get their turns."""
    for part in parts:
        for value in (vars(part).values() if hasattr(part, "__dict__") else (part,)):
            if isinstance(value, dict | set):  # its contents kept here, freed below
                rest = [*value, *value.values()] if isinstance(value, dict) else [*value]
                value.clear()
                value = rest
            if isinstance(value, list):
                while value:
                    del value[-256:]


def let_others_run() -> None:
    """Give the GIL to a waiting thread now. A worker calling Qt in a tight loop kept it
    from the GUI thread for 20-50 ms at a time though Python code ran between the calls
    (4096 paths built for expanded dag100k: a 50 ms freeze); a zero sleep hands it over."""
    time.sleep(0)
