"""Level of detail on the real canvas: what a far zoom leaves out and how it draws the
rest (plain rectangles and straight segments, batched from numpy arrays: issue 35)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from onnxstudio.render import qt_surface
from onnxstudio.render.drawing import Stroke, Surface
from onnxstudio.render.hit_index import GraphIndex
from onnxstudio.render.qt_surface import QtSurface
from onnxstudio.render.scene_painter import TRIM, GraphPainter
from onnxstudio.render.theme import LIGHT
from onnxstudio.ui.canvas.graph_view import GraphView
from tests.render_support import demo_layout, grid_layout


@pytest.fixture
def view(shown_view: GraphView) -> GraphView:
    shown_view.set_layout(demo_layout(), keep_view=False)
    return shown_view


def _spy(view: GraphView, name: str) -> list[tuple[Any, ...]]:
    """The calls of ``name`` the view's surface gets from now on (after one paint)."""
    view.viewport().repaint()
    surface = view._surface
    assert surface is not None
    calls: list[tuple[Any, ...]] = []
    real: Callable[..., None] = getattr(surface, name)

    def record(*args: Any) -> None:
        calls.append(args)
        real(*args)

    setattr(surface, name, record)
    return calls


def _zoom_on(view: GraphView, scale: float, box_id: str) -> None:
    layout = view.graph_layout()
    box = layout.box(box_id) if layout is not None else None
    assert box is not None
    view._set_scale(scale)
    view.centerOn(QPointF(*box.center))


def test_a_box_label_is_drawn_at_1_to_1_and_not_at_a_far_zoom(view: GraphView) -> None:
    texts = _spy(view, "text")
    lines = _spy(view, "straight_lines")
    _zoom_on(view, 1.0, "n1")
    view.viewport().repaint()
    assert "BatchNormalization" in [args[2] for args in texts]
    # the straight edges in one batch (the screen's surface), trimmed for their arrowheads
    layout = view.graph_layout()
    assert layout is not None
    straight = [e for e in layout.edges if len(e.points) == 2 and not e.back]
    assert len(lines) == 1 and 0 < len(lines[0][0]) <= len(straight)
    ends = {(e.points[0], e.points[1][0], e.points[1][1] - TRIM) for e in straight}
    assert {((x0, y0), x1, y1) for x0, y0, x1, y1 in lines[0][0].tolist()} <= ends
    assert lines[0][1].width == 1.2
    lines = _spy(view, "lines")
    texts.clear()
    _zoom_on(view, 0.1, "n1")
    view.viewport().repaint()
    assert texts == []  # a 1 px title says nothing: no text at all
    # the edges are straight segments from the index's array, all in one call
    assert len(lines) == 1
    assert len(lines[0][0]) == len(view.index().segments_in(None))  # type: ignore[union-attr]


def test_a_far_zoom_still_shows_boxes_frames_and_edges(view: GraphView) -> None:
    _zoom_on(view, 0.1, "n4")
    image = view.viewport().grab().toImage()
    layout = view.graph_layout()
    assert layout is not None

    def colour_at(x: float, y: float) -> QColor:
        p = view.mapFromScene(QPointF(x, y))
        return image.pixelColor(p.x(), p.y())

    pool, relu = layout.box("n3"), layout.box("n2")
    assert pool is not None and relu is not None
    assert colour_at(*pool.center) == QColor(LIGHT.node("pool").fill)
    frame = layout.groups[0]
    # inside the frame, right of every box: the frame's own fill
    inside = colour_at(frame.x + frame.width - 20.0, frame.y + frame.height / 2)
    assert inside == QColor(LIGHT.group_fill(0))
    assert colour_at(frame.x - 60.0, frame.y + frame.height / 2) == QColor(LIGHT.canvas)
    gap = (relu.center[0], (relu.y + relu.height + pool.y) / 2)  # the edge between them
    assert colour_at(*gap) != QColor(LIGHT.canvas)


def test_segments_in_gives_the_route_segments_meeting_an_area() -> None:
    index = GraphIndex(grid_layout(100, columns=10), picking=False)
    every = index.segments_in(None)
    assert every.shape == (90, 4) and every.flags.c_contiguous
    assert index.segments_in((-1e6, -1e6, 2e6, 2e6)) is every  # all in view: no copy
    some = index.segments_in((0.0, 0.0, 300.0, 120.0))
    # columns 0 and 1 of rows 0 and 1: the edges leaving row 0 and those leaving row 1
    assert sorted(map(tuple, some[:, :2].tolist())) == [(70.0, 36.0), (70.0, 106.0),
                                                      (250.0, 36.0), (250.0, 106.0)]


@pytest.mark.parametrize("kind", ["lines", "rects"])
def test_array_batches_draw_what_the_shapes_one_by_one_draw(qapp, kind: str) -> None:
    """Rows drawn straight from numpy's memory, in several runs (more than DRAW_BATCH),
    give the image Qt draws from the same shapes made one by one as Qt objects (in the
    same runs: overlapping antialiased shapes of one call blend once)."""
    rng = np.random.default_rng(7)
    n = qt_surface.DRAW_BATCH * 2 + 37
    rows = rng.uniform(0.0, 300.0, (n, 4))
    if kind == "rects":
        rows[:, 2:] = rng.uniform(1.0, 12.0, (n, 2))
    stroke = Stroke("#335577", 1.5)

    def image(draw: Callable[[QPainter, QtSurface], None]) -> QImage:
        img = QImage(320, 320, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor("#ffffff"))
        painter = QPainter(img)
        surface = QtSurface(painter)
        draw(painter, surface)
        painter.end()
        return img

    def batched(_painter: QPainter, surface: QtSurface) -> None:
        if kind == "lines":
            surface.lines(np.asfortranarray(rows), stroke)  # copied to C order first
        else:
            surface.rects(rows, "#aa3344", stroke)

    def one_by_one(painter: QPainter, surface: QtSurface) -> None:
        surface.rect(0.0, 0.0, 0.0, 0.0, "#aa3344", stroke)  # the same pen and brush
        shape = QLineF if kind == "lines" else QRectF
        shapes = [shape(*row) for row in rows.tolist()]
        draw = painter.drawLines if kind == "lines" else painter.drawRects
        for i in range(0, n, qt_surface.DRAW_BATCH):
            draw(shapes[i:i + qt_surface.DRAW_BATCH])

    assert image(batched) == image(one_by_one)


def test_edges_with_kept_arrowheads_draw_what_the_default_draws(qapp) -> None:
    """The screen keeps each arrowhead's polygon between paints (the painter hands over
    the same point lists); the image is the one the surface's primitives draw."""
    graph = GraphPainter(demo_layout(), LIGHT)

    def image(surface_edges: bool) -> tuple[QImage, QtSurface]:
        img = QImage(720, 1000, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor("#ffffff"))
        painter = QPainter(img)
        surface = QtSurface(painter)
        if not surface_edges:  # the base class' edges: path and polygon, one by one
            surface.edges = lambda batch: Surface.edges(surface, batch)  # type: ignore[method-assign]
        for _ in range(2):  # the second paint finds every arrowhead built
            graph.paint(surface, None, 1.0)
        painter.end()
        return img, surface

    kept, surface = image(True)
    assert image(False)[0] == kept
    assert len(surface._arrows) == len(graph.layout.edges)
