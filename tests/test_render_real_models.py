"""The canvas and the painter on real models laid out by the layout engine."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from onnxstudio.render.scene_painter import GraphPainter
from onnxstudio.render.theme import LIGHT
from tests.conftest import ladder_model, shared_model
from tests.render_support import render_svg

build = pytest.importorskip("onnxstudio.layout.build")
SVG_NS = "{http://www.w3.org/2000/svg}"


def _layout(path):
    from onnxstudio.model.open import load_model

    model = load_model(path)
    functions = {f.key: f.body for f in model.functions}
    return build.build_layout(model.graph, functions=functions)


@pytest.fixture(scope="module")
def resnet_layout():
    return _layout(shared_model("zoo/onnx_light/light_resnet50.onnx"))


def test_resnet_svg_has_every_operator(resnet_layout) -> None:
    root = ET.fromstring(render_svg(GraphPainter(resnet_layout, LIGHT)))
    nodes = {g.get("data-id"): g for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"}
    op_boxes = [b for b in resnet_layout.boxes if b.kind == "node"]
    assert len(op_boxes) > 100
    assert set(nodes) == {b.id for b in op_boxes}
    assert {g.get("data-op-type") for g in nodes.values()} >= {"Conv", "Relu", "MaxPool"}


def test_resnet_in_view_click_and_fit(resnet_layout, qtbot) -> None:
    from onnxstudio.ui.canvas.graph_view import GraphView

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    qtbot.waitExposed(view)
    view.set_layout(resnet_layout, keep_view=False)
    conv = next(b for b in resnet_layout.boxes if b.title == "Conv")
    view.centerOn(conv.id)
    pos = view.map_box_to_view(conv.id)
    assert pos is not None
    with qtbot.waitSignal(view.selectionChanged) as blocker:
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [[conv.id]]
    image = view.viewport().grab().toImage()
    header = view.mapFromScene(QPointF(conv.x + 4, conv.y + 3))
    assert image.pixelColor(header).name() == LIGHT.node("conv").fill
    QTest.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    # Fit shows the whole graph
    from onnxstudio.layout import viewport

    vp = view.viewport().rect()
    whole = viewport.whole_scale(resnet_layout, vp.width(), vp.height())
    assert view.current_scale() == pytest.approx(min(whole, viewport.MAX_OPEN_SCALE))
    assert set(view.visible_box_ids()) == {b.id for b in resnet_layout.boxes}
    image = view.viewport().grab().toImage()
    assert image.pixelColor(0, 0) == QColor(LIGHT.canvas)


def test_bert_groups_collapse_from_frame_label(qtbot) -> None:
    from onnxstudio.ui.canvas.graph_view import GraphView

    layout = _layout(ladder_model("bert12.onnx"))
    assert layout.groups
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show()
    qtbot.waitExposed(view)
    view.set_layout(layout, keep_view=False)
    frame = max(layout.groups, key=lambda g: (g.depth, g.width))
    view.center_on_box(frame.id, flash=False)
    view.zoom_by(1.0 / view.current_scale())
    view.centerOn(QPointF(frame.x + frame.width / 2, frame.y + 10))
    pos = view.mapFromScene(QPointF(frame.x + 20, frame.y + 10))
    assert view.index().group_label_at(frame.x + 20, frame.y + 10) == frame.id  # type: ignore[union-attr]
    with qtbot.waitSignal(view.collapseRequested) as blocker:
        QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [frame.id]
