"""The garbage collector's pause, freeze and release around bulk building.

Building a big graph allocates ~1M objects; a full collection of them holds the GIL for
150 ms+ and freezes the window. Workers that build in bulk collect nothing while
building, then freeze the survivors so later collections never rescan them, until a model
closes (``unfreeze_and_collect``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_collector(enabled: bool = True) -> Iterator[None]:
    """No collection inside; the survivors frozen after it."""
    if not enabled:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def unfreeze_and_collect() -> None:
    """Undo the quiet tasks' freezes and collect once: a model closed. Frozen objects are
    never collected, so cycles that died while frozen (a closed tab's Python side, the
    temporaries of every build, which ran with the collector off) stayed for good: the
    window grew by ~35 MiB each time dag30k was opened and closed (issue 32). One
    collection when a tab closes costs less than rescanning the open models' objects
    after every task, which is what the freeze spares: without it dag30k's open stalled
    740-825 ms instead of 110-240, dag100k's 1.3-2.7 s instead of 115-215 ms."""
    if gc.get_freeze_count():  # else the collector has been free to run all along
        gc.unfreeze()
        gc.collect()
