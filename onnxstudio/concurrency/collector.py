"""The garbage collector paused around bulk building, and where the survivors go.

Building a big graph allocates hundreds of thousands of objects. With the collector on,
young collections rescan them again and again while they are built; paused and simply
resumed, the first young collection after the build scans them all at once, holding the
GIL (dag100k's open: a 0.5-2.4 s young collection froze the window, issue 32). So bulk
builds run with the collector paused, and their survivors then go straight to the
oldest generation, unscanned: ``gc.freeze()`` followed at once by ``gc.unfreeze()`` is
the public way to move them there. Only a full collection scans them again, and one
runs when the long-lived objects grew by a quarter since the last.

Nothing stays frozen: a lasting freeze (until a tab closed) kept every cycle that died
meanwhile, and made closing a tab pay a full collection. What keeps a full collection
short now is that there is little to scan: a model's nodes and values hold tuples, not
lists, and finished layouts pack their routes (dag100k's model alone: 624k tracked
objects and a 200 ms full collection before, 224k and 82 ms after).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_sections = 0  # quiet sections running now, on any thread
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def quiet_collector(enabled: bool = True) -> Iterator[None]:
    """No collection inside; the survivors moved to the oldest generation after it. The
    collector is enabled again when the last quiet section running ends, unless it was
    off when the first began (a test). Sections overlap (a diff's comparison beside the
    Cost dock's count): the first to end enabled the collector under the other, whose
    bulk build then ran full collections of the whole heap holding the GIL (dag100k's
    diff: 340-500 ms each, six in a row, the window frozen for each)."""
    if not enabled:
        yield
        return
    global _sections, _resume
    with _lock:
        if _sections == 0:
            _resume = gc.isenabled()
            gc.disable()
        _sections += 1
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        with _lock:
            _sections -= 1
            if _sections == 0 and _resume:
                gc.enable()
