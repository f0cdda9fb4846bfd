"""Expand All shows the expanded graph as soon as it is laid out: the layout task
prepares what the view shows (its routes, its edge labels), the tab swaps the drawing
in, and a later task prepares the rest (the long curves, each tensor's home tile)
while the expanded view is already drawn; nothing on screen changes when that
finishes. The other labels are placed as they are needed: the tiles around the view
between paints, a tile scrolled to by the paint that shows it first, all by an export;
each the same labels as an export of the whole drawing places."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPointF

from onnxstudio.render.edge_labels import TILE
from onnxstudio.render.label_tiles import tile_key
from onnxstudio.render.scene_painter import GraphPainter, lod
from onnxstudio.render.theme import LIGHT
from tests.builders import save
from tests.conftest import expanded_tab, opened_tab, shown_window
from tests.render_support import edge_labels_drawn


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
    assert not painter.labels.placement().complete  # only what was needed
    assert view.painter() is painter
    view.viewport().repaint()
    assert view.viewport().grab().toImage() == first  # nothing redrawn otherwise


def _first_view(qtbot, tab, before, held: threading.Event):
    """The view's pixels once the expanded layout is shown, its rest held back."""
    view = tab.view
    qtbot.waitUntil(lambda: tab.layout_data is not before and held.is_set(), timeout=120_000)
    # the expanded scene is wider than the view: its scroll bar may come a turn later
    qtbot.waitUntil(view.horizontalScrollBar().isVisible, timeout=10_000)
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
    shown = {tile_key(int(x // TILE), int(y // TILE))
             for x in (area.left(), area.right()) for y in (area.top(), area.bottom())}
    assert shown <= placement.done
    assert len(placement.labels.edge) > 0
    return first


def _tile_at(x: float, y: float) -> int:
    return tile_key(int(x // TILE), int(y // TILE))


def test_expanded_labels_are_placed_around_the_view_and_where_it_goes(qtbot, tmp_path: Path
                                                                       ) -> None:
    """After Expand All only the labels near the view are placed; the tiles around it
    are placed between paints without being shown, and a tile far away, never placed,
    gets its labels when the view is scrolled there: the very labels an export places."""
    from tests.benchmarks.ladder import dag

    tab = expanded_tab(qtbot, save(dag(12_000), tmp_path / "dag12k.onnx"))
    view = tab.view
    view.reset_zoom()  # 1:1, edge labels shown
    view.viewport().repaint()
    painter, layout = view.painter(), tab.layout_data
    placement = painter.labels.placement()
    seen = view.visible_scene_rect()
    below = (seen.center().x(), seen.bottom() + TILE / 2)  # within a view of it
    qtbot.waitUntil(lambda: _tile_at(*below) in placement.done, timeout=10_000)

    far = (layout.width / 2, layout.height * 0.6)  # dozens of tiles down
    assert _tile_at(*far) not in placement.done and not placement.complete
    view.centerOn(QPointF(*far))
    view.viewport().repaint()
    assert _tile_at(*far) in placement.done
    r = view.visible_scene_rect()
    area = (r.x(), r.y(), r.width(), r.height())
    shown = edge_labels_drawn(painter, area)
    assert len(shown) > 10
    everything = GraphPainter(layout, LIGHT)
    everything.labels.placed()  # every tile at once, as an export does
    assert shown == edge_labels_drawn(everything, area)
    assert not placement.complete


def test_long_routes_smoothed_after_the_first_paint_come_with_their_paths(
        qtbot, tmp_path: Path, monkeypatch) -> None:
    """The finisher smooths the long routes outside the first view and builds their
    QPainterPaths off the GUI thread: a paint that shows them builds none itself (the
    GUI thread built them in paint before)."""
    from onnxstudio.render import qt_surface
    from onnxstudio.render.scene_painter import LONG_ROUTE_POINTS
    from tests.benchmarks.ladder import bert

    tab = expanded_tab(qtbot, save(bert(48), tmp_path / "bert48.onnx"))
    view = tab.view
    layout = tab.layout_data
    view.reset_zoom()
    long = [k for k, e in enumerate(layout.edges) if e.point_count >= LONG_ROUTE_POINTS]
    assert len(long) > 20
    built: list[int] = []  # the routes whose path a paint built, by identity
    real = qt_surface.qpath
    monkeypatch.setattr(qt_surface, "qpath", lambda start, segs: built.append(id(segs))
                        or real(start, segs))
    painter = view.painter()
    for y in np.linspace(0.0, layout.height, 12):  # down the whole drawing, at 1:1
        view.centerOn(QPointF(layout.width / 2, float(y)))
        view.viewport().repaint()
    smoothed = {id(painter.drawn(k)[1]) for k in long}
    assert len(smoothed) == len(long) and not smoothed & set(built)
