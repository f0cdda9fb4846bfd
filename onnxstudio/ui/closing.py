"""A closed tab's model freed on a worker, piece by piece (issue 32).

Dropped on the GUI thread, dag30k's model went in one chain of deallocations inside
``close_tab`` (60-90 ms, in whichever panel let go of it last). Here the window hands
the model to a worker that takes it apart with ``dismantle`` (the GUI thread gets the
GIL between the pieces). Reference counting frees the rest of the tab's drawing (no
cycle holds a layout or painter), so closing runs no collection.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QObject

from onnxstudio.concurrency.gil_runs import dismantle
from onnxstudio.model import Model
from onnxstudio.ui.tasks import TaskRunner, next_turn

RELEASER = "closedModelReleaser"
ONLY_HERE = 2  # sys.getrefcount of an object one name (or one attribute) holds


def take_apart(held: list[Any]) -> int:
    """Empty ``held`` (closed models), taking apart each model nobody else holds: its
    derived views and its graph's nodes and value maps, piece by piece. A model, view or
    graph still held elsewhere (a panel, a running task) is only let go, whole: it may
    still be read. How many models were taken apart."""
    done = 0
    while held:
        model = held.pop()
        if not isinstance(model, Model) or sys.getrefcount(model) > ONLY_HERE:
            continue
        derived = vars(model).pop("derived")
        while sys.getrefcount(derived) == ONLY_HERE and derived:
            view = derived.popitem()[1]
            if sys.getrefcount(view) == ONLY_HERE:
                dismantle(view)
            del view
        graph = vars(model).pop("graph")
        if sys.getrefcount(graph) == ONLY_HERE:  # slots: its containers one by one
            dismantle(graph.nodes, graph.values, graph.initializers)
        del graph, derived
        dismantle(model)
        done += 1
    return done


def release_closed(window: QObject, held: list[Any]) -> None:
    """Free the closed tab's models in ``held`` (the caller keeps no other reference) on a
    worker, from the next turn on, when ``close_tab`` and what it posted have let go of
    them."""
    runner = window.findChild(TaskRunner, RELEASER)
    if runner is None:
        runner = TaskRunner(window)
        runner.setObjectName(RELEASER)
    next_turn(runner, lambda: runner.start(lambda _context: take_apart(held)))
