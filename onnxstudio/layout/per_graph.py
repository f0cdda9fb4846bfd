"""What was derived from a Graph object, kept for a few recent graphs and only while the
graph lives: a closed model's graph goes, and what was derived from it with it.

Keyed by identity, not equality (a Graph is a mutable dataclass, so it cannot be hashed,
and two equal graphs are still two models). Held strongly, a closed model's graph and its
scope tree stayed until four other graphs took their places: up to four closed dag30k
graphs, ~37 MiB each (issue 32).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from onnxstudio.model.graph import Graph

T = TypeVar("T")


class PerGraph(Generic[T]):
    """A value per live Graph, the ``size`` most recently put; safe across threads.
    ``release`` is called on a value whose graph died (not on one evicted: its graph may
    still be in use)."""

    def __init__(self, size: int = 4, release: Callable[[T], None] | None = None) -> None:
        self._size = size
        self._release = release
        self._items: dict[int, tuple[weakref.ref[Graph], T]] = {}
        # Reentrant: a graph may die (and its callback run) while this thread holds it.
        self._lock = threading.RLock()

    def get(self, graph: Graph) -> T | None:
        with self._lock:
            hit = self._items.get(id(graph))
        return hit[1] if hit is not None and hit[0]() is graph else None

    def put(self, graph: Graph, value: T) -> None:
        key = id(graph)

        def gone(ref: weakref.ref[Graph]) -> None:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None and hit[0] is ref:  # not a newer graph at that address
                    del self._items[key]
                else:
                    hit = None
            if hit is not None and self._release is not None:
                self._release(hit[1])

        with self._lock:
            self._items.pop(key, None)
            while len(self._items) >= self._size:
                self._items.pop(next(iter(self._items)))
            self._items[key] = (weakref.ref(graph, gone), value)
