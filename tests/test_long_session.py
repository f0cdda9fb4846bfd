"""Long sessions (issue 32): the window gives a closed model's memory back, and is idle
when nothing happens. Real window, real models, driven as a user would."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractAnimation, QTimer
from PySide6.QtWidgets import QApplication, QProgressBar

from onnxstudio.model.open import load_model
from onnxstudio.ui.closing import take_apart
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from tests.benchmarks.ladder import dag
from tests.benchmarks.session import rss_mb
from tests.builders import save
from tests.conftest import LADDER, shown_window

TIMEOUT = 180_000
CYCLES = 6


def large_model(tmp_path: Path) -> Path:
    """dag30k from ../shared/ladder, else a generated 5,000-node DAG of the same kind."""
    shared = LADDER / "dag30k.onnx"
    return shared if shared.exists() else save(dag(5_000), tmp_path / "dag5k.onnx")


def open_and_close(qtbot, window: MainWindow, path: Path) -> None:
    """Open ``path``, wait until it is shown with its shapes, close the tab, and wait until
    the model's graph is gone from the process."""
    (tab,) = window.open_paths([str(path)])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=TIMEOUT)
    assert tab.error is None
    graph = weakref.ref(tab.model.graph)
    window.close_tab(window.tabs.indexOf(tab))
    qtbot.waitUntil(lambda: graph() is None, timeout=10_000)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_opening_and_closing_a_large_model_gives_its_memory_back(qtbot, tmp_path: Path) -> None:
    """Five more cycles keep less than one open model's worth (before issue 32 each of
    dag30k's cycles kept ~37 MiB: 219 -> 472 MiB in seven)."""
    window = shown_window(qtbot, 1600, 1000)
    path = large_model(tmp_path)
    empty = rss_mb()
    open_and_close(qtbot, window, path)
    first = rss_mb()
    for _ in range(CYCLES - 1):
        open_and_close(qtbot, window, path)
    growth = rss_mb() - first
    one_model = first - empty  # one open's footprint, imports and caches included
    assert growth < one_model, (  # old code: +216 MiB (dag30k, one model 74), +99 (dag5k, 45)
        f"{CYCLES} open/close cycles of {path.name}: {empty:.0f} MiB empty, {first:.0f} "
        f"after the first, +{growth:.0f} MiB after the others")


def test_a_closed_tab_is_freed_by_reference_counting(qtbot, tmp_path: Path) -> None:
    """Closing a tab frees its layout, painter and scope tree with no collection at all:
    before, a cycle (painter -> edge labels -> the painter's bound method), the
    minimap's key and the tree's parent links held them until a full collection, which
    every close then ran (the close stall of issue 32), the window's objects unfrozen
    for it."""
    from onnxstudio.layout.scopes import graph_scope_tree

    window = shown_window(qtbot, 1600, 1000)
    path = save(dag(2_000), tmp_path / "dag2k.onnx")
    started: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    was_on = gc.isenabled()
    gc.disable()
    gc.callbacks.append(seen)
    try:
        tabs = window.open_paths([str(path)])  # no name of its own to outlive the close
        qtbot.waitUntil(lambda: tabs[0].layout_data is not None and not tabs[0].busy,
                        timeout=TIMEOUT)
        tabs[0].view.zoom_by(4.0)  # part of the graph in view: the minimap shows the whole
        qtbot.wait(500)
        drawing = [weakref.ref(tabs[0].layout_data), weakref.ref(tabs[0].view.painter()),
                   weakref.ref(graph_scope_tree(tabs[0].model.graph).root)]
        started.clear()
        window.close_tab(window.tabs.indexOf(tabs.pop()))
        qtbot.waitUntil(lambda: all(ref() is None for ref in drawing), timeout=10_000)
        assert started == []
    finally:
        gc.callbacks.remove(seen)
        if was_on:
            gc.enable()


def test_after_open_and_run_nothing_animates_or_ticks(qtbot) -> None:
    """Idle means idle: no busy bar on screen, no style animation running, no repeating
    timer left active once the model is shown, a run has answered, every tensor was
    captured and a profile is done."""
    from onnxstudio.ui.insight.profile_panel import ProfileOptions

    window = shown_window(qtbot)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=TIMEOUT)
    with qtbot.waitSignal(window.run_panel.runFinished, timeout=TIMEOUT):
        window.run_panel.run_random()
    window.insight.capture_all()
    qtbot.waitUntil(lambda: bool(window.insight.captured()), timeout=TIMEOUT)
    window.insight.start_profile(ProfileOptions("disable", 1, 0))
    qtbot.waitUntil(lambda: window.insight.profile_panel.result() is not None, timeout=TIMEOUT)
    qtbot.wait(300)  # what the answers leave for later turns
    widgets = [w for top in QApplication.topLevelWidgets() for w in [top, *top.findChildren(
        QProgressBar)]]
    spinning = [bar for bar in widgets if isinstance(bar, QProgressBar) and bar.isVisible()
                and bar.minimum() == bar.maximum()]
    assert not spinning
    objects = [QApplication.instance(), *QApplication.topLevelWidgets()]
    animations = [a for o in objects for a in o.findChildren(QAbstractAnimation)
                  if a.state() == QAbstractAnimation.State.Running]
    assert not animations
    ticking = [t for o in objects for t in o.findChildren(QTimer)
               if t.isActive() and not t.isSingleShot()]
    assert not ticking, [(t.parent(), t.interval()) for t in ticking]


def test_closing_a_tab_takes_its_model_apart_on_a_worker(qtbot, tmp_path: Path) -> None:
    """The closed model is emptied piece by piece off the GUI thread (ui/closing.py), not
    dropped in one chain of deallocations inside close_tab: its node list (held here, so
    only taking the model apart can empty it) ends up empty. Before, it stayed full."""
    window = shown_window(qtbot, 1600, 1000)
    (tab,) = window.open_paths([str(save(dag(2_000), tmp_path / "dag2k.onnx"))])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=TIMEOUT)
    nodes = tab.model.graph.nodes
    assert len(nodes) > 1_000
    window.close_tab(window.tabs.indexOf(tab))
    qtbot.waitUntil(lambda: not nodes, timeout=10_000)


def test_a_model_held_elsewhere_is_left_whole() -> None:
    """A closed model a panel or task still holds is only let go: it may still be read."""
    model = load_model(sample_model_path())
    nodes = model.graph.nodes
    count = len(nodes)
    assert take_apart([model]) == 0
    assert len(nodes) == count and model.graph.nodes is nodes
    held = [model]
    del model
    assert take_apart(held) == 1
    assert not nodes and not held
