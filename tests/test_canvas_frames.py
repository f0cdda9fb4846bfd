"""What the canvas does that exports do not (issue 35): a big graph's looks drawn once
per zoom into pixmaps, reused on a pan and dropped with the theme; its far-zoom
pictures, painted on a worker and following the theme; tall frames cut to the view.
Each is checked against the same view painted without it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage

from onnxstudio.layout.types import Box, Edge, GroupFrame, Layout
from onnxstudio.render.qt_surface import QtSurface
from onnxstudio.render.theme import DARK, LIGHT
from onnxstudio.ui.canvas import far_view, graph_canvas
from onnxstudio.ui.canvas.graph_view import GraphView
from tests.render_support import grid_layout


@pytest.fixture
def view(shown_view: GraphView) -> GraphView:
    return shown_view


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(),
                                                              image.bytesPerLine())
    return rows[:, :image.width() * 4].astype(int)


class _Plain(QtSurface):
    """The exports' surface, where the canvas wants its own."""

    keeps_looks = False

    def show(self, _area: tuple[float, float, float, float]) -> None:
        """Everything is drawn whole, wherever it is."""


def _plain(view: GraphView, monkeypatch: pytest.MonkeyPatch) -> QImage:
    """The view as painted without what this module tests: every shape drawn in place,
    whole."""
    with monkeypatch.context() as m:
        m.setattr(graph_canvas, "ScreenSurface", _Plain)
        m.setattr(view.far, "draw", lambda *_args: False)
        view._surface = None
        image = view.viewport().grab().toImage()
    view._surface = None
    return image


def _alike(a: QImage, b: QImage) -> None:
    diff = np.abs(_pixels(a) - _pixels(b))
    assert diff.mean() < 1.0  # out of 255: antialiasing apart (flat caps, a scaled picture)
    assert (diff > 64).mean() < 0.002


def test_box_looks_are_drawn_once_per_zoom_and_reused_on_a_pan(
        view: GraphView, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_canvas, "STAMP_MIN_BOXES", 300)
    view.set_layout(grid_layout(200), keep_view=False)
    view.viewport().grab()
    assert view._surface is not None and view._surface.stamps_drawn == 0  # small: none
    layout = grid_layout(400)  # nine categories: nine looks, and one edge label
    view.set_layout(layout, keep_view=False)
    view._set_scale(1.0)
    view.centerOn(QPointF(900.0, 700.0))
    shown = view.viewport().grab().toImage()
    surface: Any = view._surface
    first = surface.stamps_drawn
    assert 0 < first <= 10
    _alike(shown, _plain(view, monkeypatch))

    view.viewport().grab()  # a fresh surface after _plain
    surface = view._surface
    drawn = surface.stamps_drawn
    bar = view.horizontalScrollBar()
    for step in (360, -180, 540):  # columns on and back: new boxes, the same looks
        bar.setValue(bar.value() + step)
        view.viewport().grab()
        assert surface.stamps_drawn == drawn
    view._set_scale(0.8)
    view.viewport().grab()
    assert surface.stamps_drawn > drawn  # another zoom: drawn again
    drawn = surface.stamps_drawn

    view.set_theme(DARK)
    dark = view.viewport().grab().toImage()
    assert surface.stamps_drawn > drawn  # the light looks were dropped
    _alike(dark, _plain(view, monkeypatch))
    shown_ids = view.visible_box_ids()
    box = layout.box(shown_ids[len(shown_ids) // 2])
    assert box is not None
    header = view.mapFromScene(QPointF(box.x + 8.0, box.y + 5.0))  # left of the title
    assert QColor(dark.pixel(header)) == QColor(DARK.node(box.category).fill)


def test_a_big_graph_far_away_is_drawn_from_its_picture(
        view: GraphView, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(far_view, "MIN_BOXES", 500)
    view.set_layout(grid_layout(100), keep_view=False)
    assert not view.far.pending() and not view.far.ready()  # small: painted directly

    layout = grid_layout(900)
    view.set_layout(layout, keep_view=False)
    assert view.far.pending()
    qtbot.waitUntil(view.far.ready, timeout=20_000)
    view._set_scale(0.05)
    view.centerOn(QPointF(layout.width / 2, layout.height / 2))
    view.viewport().repaint()
    surface: Any = view._surface
    drawn: list[Any] = []
    real = surface.rects
    surface.rects = lambda *args: (drawn.append(args), real(*args))
    far = view.viewport().grab().toImage()
    assert drawn == []  # the picture, no rectangle handed to Qt
    _alike(far, _plain(view, monkeypatch))

    view.set_theme(DARK)
    assert not view.far.ready()
    qtbot.waitUntil(view.far.ready, timeout=20_000)
    dark = view.viewport().grab().toImage()
    _alike(dark, _plain(view, monkeypatch))

    box = layout.boxes[len(layout.boxes) // 2]
    view.set_selection([box.id])
    centre = view.map_box_to_view(box.id)
    assert centre is not None
    selected = view.viewport().grab().toImage()
    assert QColor(selected.pixel(centre.x(), centre.y())) == QColor(DARK.selection)


def test_a_tall_frame_is_cut_to_the_view_and_looks_the_same(
        view: GraphView, monkeypatch: pytest.MonkeyPatch) -> None:
    top = Box("a", "node", 100.0, 0.0, 150.0, 36.0, "Add", "a", [], "math")
    bottom = Box("b", "node", 100.0, 40_000.0, 150.0, 36.0, "Add", "b", [], "math")
    # a skip connection bending at every "layer" it passes, as BERT's do
    points = [(175.0, 36.0)] + [(175.0 + (60.0 if k % 2 else 0.0), 1_000.0 * k)
                                for k in range(1, 40)] + [(175.0, 40_000.0)]
    frame = GroupFrame("/g", "g", 60.0, -30.0, 400.0, 40_130.0, 2, ["a", "b"])
    layout = Layout("TB", 500.0, 40_100.0, [top, bottom], [frame],
                    [Edge("a", "b", "v", "", points)])
    view.set_layout(layout, keep_view=False)
    view._set_scale(1.0)
    view.centerOn(QPointF(200.0, 20_300.0))
    shown = view.viewport().grab().toImage()
    drawn: list[tuple[float, ...]] = []
    real = QtSurface.rounded_rect
    with monkeypatch.context() as m:  # what the screen's surface hands to Qt's
        m.setattr(QtSurface, "rounded_rect",
                  lambda self, *args: (drawn.append(args[:4]), real(self, *args)))
        view.viewport().repaint()
    frames = [r for r in drawn if r[2] >= 399.0]  # the frame (400 wide), not a box
    assert frames and all(r[3] < 2_000.0 for r in frames)  # not its 40k units
    _alike(shown, _plain(view, monkeypatch))
    border = view.mapFromScene(QPointF(60.0, 20_300.0))  # the frame's left side, uncut
    assert QColor(shown.pixel(border)) != QColor(LIGHT.canvas)
