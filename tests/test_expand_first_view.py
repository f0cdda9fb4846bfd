"""Expand All shows the expanded graph as soon as it is laid out: the layout task
prepares what the view shows (its routes, its edge labels), the tab swaps the drawing
in, and a later task prepares the rest (every other label, the long curves) while the
expanded view is already drawn; nothing on screen changes when that finishes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from onnxstudio.render.edge_labels import TILE, _tile_key
from onnxstudio.render.scene_painter import GraphPainter, lod
from tests.builders import save
from tests.conftest import opened_tab, shown_window


def test_expand_all_draws_the_view_before_the_rest_is_prepared(qtbot, tmp_path: Path,
                                                                  monkeypatch) -> None:
    from tests.benchmarks.ladder import dag

    window = shown_window(qtbot)
    window.commands["minimap"].trigger()  # its picture comes in a task of its own
    tab = opened_tab(qtbot, window, save(dag(12_000), tmp_path / "dag12k.onnx"))
    view = tab.view
    view.reset_zoom()  # 1:1, edge labels shown
    qtbot.wait(50)
    collapsed = view.viewport().grab().toImage()

    gate, held = threading.Event(), threading.Event()
    rest = GraphPainter.prepare_rest

    def after_the_gate(self: GraphPainter, cancelled: Callable[[], bool] = lambda: False
                       ) -> None:
        held.set()
        gate.wait(60)
        rest(self, cancelled)

    monkeypatch.setattr(GraphPainter, "prepare_rest", after_the_gate)
    before = tab.layout_data
    tab.expand_all()
    try:
        first = _first_view(qtbot, tab, before, held)
    finally:
        gate.set()
    assert first != collapsed
    painter = view.painter()
    qtbot.waitUntil(lambda: not tab.busy, timeout=120_000)
    assert painter.labels.placement().complete
    assert view.painter() is painter
    view.viewport().repaint()
    assert view.viewport().grab().toImage() == first  # nothing redrawn otherwise


def _first_view(qtbot, tab, before, held: threading.Event):
    """The view's pixels once the expanded layout is shown, its rest held back."""
    view = tab.view
    qtbot.waitUntil(lambda: tab.layout_data is not before and held.is_set(), timeout=120_000)
    view.viewport().repaint()
    first = view.viewport().grab().toImage()
    painter = view.painter()
    assert painter is not None and len(painter.layout.boxes) > 12_000 > 20 * len(before.boxes)
    assert tab.busy
    # the labels of the view were placed by then, and only the tiles around it
    scale = view.current_scale()
    assert lod(scale)[3]
    area = view.mapToScene(view.viewport().rect()).boundingRect()
    placement = painter.labels.placement()
    assert not placement.complete
    shown = {_tile_key(int(x // TILE), int(y // TILE))
             for x in (area.left(), area.right()) for y in (area.top(), area.bottom())}
    assert shown <= placement.done
    assert len(placement.labels.edge) > 0
    return first
