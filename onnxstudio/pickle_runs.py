"""A list pickled as a count, then runs of items: what a thread reads while the window waits.

One ``pickle.loads`` holds the GIL for its whole run (a second for 100k layout boxes,
310 ms for dag100k's profile): read a run at a time, the GUI thread gets its turn
between runs. The layout cache and the profile child's answer both hand lists back so.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import IO, Any


def dump_runs(items: Sequence[Any], out: IO[bytes], per: int) -> None:
    """``len(items)``, then the items ``per`` to a pickle."""
    pickle.dump(len(items), out, 5)
    for start in range(0, len(items), per):
        pickle.dump(items[start:start + per], out, 5)


def load_runs(load: Callable[[], Any], check: Callable[[], None] | None = None
              ) -> list[Any]:
    """What ``dump_runs`` wrote, each pickle read by ``load``; ``check`` before each run
    may raise to stop (a cancelled task)."""
    count = load()
    items: list[Any] = []
    while len(items) < count:
        if check is not None:
            check()
        items.extend(load())
    return items
