"""Selecting a part to cut on the canvas: rubber band, Select Between, and the cut they make."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from onnxstudio.model import load_model
from onnxstudio.model.cut import cut_from_nodes
from onnxstudio.model.index import node_by_id
from onnxstudio.model.paths import nodes_between
from onnxstudio.ui.dialogs.extract_dialog import selection_node_ids
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import save
from tests.conftest import ladder_model, shown_window
from tests.test_main_window import wait_open
from tests.test_split import skip_mlp


@pytest.fixture(autouse=True)
def _drain_workers():
    yield
    TaskRunner.wait_all()


def _index(model, name: str) -> int:
    return next(n.index for n in model.graph.nodes if n.name == name)


def test_nodes_between_follows_paths_in_either_order(tmp_path: Path) -> None:
    model = load_model(save(skip_mlp(), tmp_path / "skip.onnx"))
    a, b = _index(model, "/l1/MatMul"), _index(model, "/l3/Relu")
    expected = {_index(model, f"/l{k}/{op}") for k in (1, 2, 3) for op in ("MatMul", "Relu")}
    assert nodes_between(model.graph, a, b) == expected
    assert nodes_between(model.graph, b, a) == expected
    # the skip: from the first Relu to the final Add, both the chain and the shortcut
    skip = nodes_between(model.graph, _index(model, "/l0/Relu"), _index(model, "/skip/Add"))
    assert len(skip) == len(model.graph.nodes) - 1  # all but /l0/MatMul


def test_nodes_between_unjoined_nodes_is_empty(tmp_path: Path) -> None:
    model = load_model(ladder_model("bert12.onnx"))
    ids = model.graph.inputs
    readers = [model.graph.values[name].consumers[0] for name in ids]
    assert nodes_between(model.graph, *readers[:2]) == set()


@pytest.fixture
def window(qtbot, tmp_path: Path) -> MainWindow:
    w = shown_window(qtbot)
    wait_open(qtbot, w.open_paths([str(save(skip_mlp(), tmp_path / "skip.onnx"))])[0])
    return w


def test_rubber_band_on_the_canvas_gives_the_expected_cut(window: MainWindow) -> None:
    tab = window.current_tab()
    view, layout, model = tab.view, tab.layout_data, tab.model
    view.fit()
    ids = {n.name: n.id for n in model.graph.nodes}
    first, last = layout.box(ids["/l1/MatMul"]), layout.box(ids["/l2/Relu"])
    left = min(first.x, last.x) - 40
    right = max(first.x + first.width, last.x + last.width) + 40
    top_left = view.mapFromScene(QPointF(left, first.y - 4))
    bottom_right = view.mapFromScene(QPointF(right, last.y + last.height + 4))
    vp = view.viewport()
    shift = Qt.KeyboardModifier.ShiftModifier  # a plain drag pans
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, shift, top_left)
    QTest.mouseMove(vp, (top_left + bottom_right) / 2)
    QTest.mouseMove(vp, bottom_right)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, shift, bottom_right)
    chosen = {node_by_id(model, i).name for i in view.selected_ids()}
    assert chosen == {"/l1/MatMul", "/l1/Relu", "/l2/MatMul", "/l2/Relu"}
    cut = cut_from_nodes(model, selection_node_ids(model, view.selected_ids()))
    assert [t.name for t in cut.inputs] == ["h0"]
    assert [t.name for t in cut.outputs] == ["h2"]


def test_select_between_selects_the_path(window: MainWindow) -> None:
    tab = window.current_tab()
    model = tab.model
    ids = {n.name: n.id for n in model.graph.nodes}
    tab.view.set_selection([ids["/l3/Relu"], ids["/l1/MatMul"]])
    window.commands["between"].trigger()
    chosen = {node_by_id(model, i).name for i in tab.view.selected_ids()}
    assert chosen == {f"/l{k}/{op}" for k in (1, 2, 3) for op in ("MatMul", "Relu")}
    assert "Selected 6 nodes between" in window.statusBar().currentMessage()
    tab.view.set_selection([ids["/l3/Relu"]])
    window.commands["between"].trigger()
    assert "select exactly two nodes" in window.statusBar().currentMessage()
