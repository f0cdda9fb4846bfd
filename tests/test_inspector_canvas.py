"""The inspector wired to a real canvas (ModelTab): click → node panel, search → reveal."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.inspector.inspector import Inspector
from tests.builders import save, tiny_mlp
from tests.conftest import ladder_model, shared_model
from tests.render_support import RecordingSurface


def open_tab(qtbot, path) -> tuple[ModelTab, Inspector]:
    tab = ModelTab(path)
    qtbot.addWidget(tab)
    tab.resize(900, 700)
    tab.show()
    tab.start()
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    inspector = Inspector(lambda: tab)
    inspector.show_model(tab.model)
    tab.view.selectionChanged.connect(lambda ids: inspector.show_selection(tab.model, ids))
    return tab, inspector


def test_click_node_in_canvas_shows_it(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    softmax = next(n for n in tab.model.graph.nodes if n.op_type == "Softmax")
    tab.view.centerOn(softmax.id)
    pos = tab.view.map_box_to_view(softmax.id)
    QTest.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    panel = inspector.node
    assert panel.tree.find_row("Type", "Node").text(1) == "Softmax"
    assert panel.tree.find_row("axis", "Attributes").text(1) == "-1"
    assert panel.tree.find_row("Version in force", "Node").text(1) == "13"


def test_search_reveals_node_in_collapsed_group_and_centres_it(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    tab.collapse_all()
    relu = next(n for n in tab.model.graph.nodes if n.op_type == "Relu")
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data.box(relu.id) is None, timeout=30000)
    inspector.search.set_query("relu")
    inspector.search.next_result()
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data.box(relu.id) is not None,
                    timeout=30000)
    # Centred as far as the scene allows (a small graph cannot scroll past its edges)
    # and ringed so the eye finds it.
    qtbot.waitUntil(lambda: tab.view.paint_state().flash == relu.id, timeout=5000)
    assert tab.view.viewport().rect().contains(tab.view.map_box_to_view(relu.id))


def test_search_centres_node_in_large_graph(qtbot):
    tab, inspector = open_tab(qtbot, ladder_model("bert12.onnx"))
    target = tab.model.graph.nodes[len(tab.model.graph.nodes) // 2]
    inspector.search.set_query(f"^{re.escape(target.name)}$", regex=True)
    inspector.search.next_result()
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data.box(target.id) is not None
                    and tab.view.paint_state().flash == target.id, timeout=60000)
    box = tab.layout_data.box(target.id)
    centre = tab.view.mapToScene(tab.view.viewport().rect().center())
    assert abs(centre.y() - box.center[1]) < 2  # the graph is tall: centred vertically
    assert tab.view.viewport().rect().contains(tab.view.map_box_to_view(target.id))


def test_body_link_expands_if_in_place(qtbot):
    tab, inspector = open_tab(
        qtbot, shared_model("ortdata/onnxruntime/test/testdata/if_mul.onnx"))
    inner = "n0/then_branch/n0"
    assert tab.layout_data.box(inner) is None
    inspector.node.show_node(tab.model, "n0")
    inspector.node.expandBody.emit("n0")
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data.box(inner) is not None,
                    timeout=30000)


def test_weight_input_link_opens_weights_panel(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    matmul = tab.model.graph.nodes[0]
    inspector.show_selection(tab.model, [matmul.id])
    item = inspector.node.tree.find_row("B", "Inputs")
    assert item.text(1).startswith("W1\n")
    with qtbot.waitSignal(inspector.weights.loaded, timeout=30000) as blocker:
        inspector.node.tree.itemClicked.emit(item, 1)
    assert blocker.args == ["W1"]
    assert inspector.weights.stat_labels["shape"].text() == "[4, 8]"


def test_search_matches_are_ringed_in_the_canvas(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    matmuls = {n.id for n in tab.model.graph.nodes if n.op_type == "MatMul"}
    inspector.search.set_query("MatMul")
    assert matmuls <= tab.view.highlighted_ids()
    relu = next(n.id for n in tab.model.graph.nodes if n.op_type == "Relu")
    assert relu not in tab.view.highlighted_ids()

    def outlines() -> int:  # the rings are really painted: one more outline per match
        surface = RecordingSurface()
        tab.view.painter().paint(surface, None, 1.0, tab.view.paint_state())
        return surface.count("rounded_rect")

    ringed = outlines()
    inspector.search.set_query("")
    assert ringed - outlines() >= len(matmuls)


def test_multi_selection_shows_a_summary(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    nodes = [n for n in tab.model.graph.nodes if n.op_type in ("MatMul", "Relu")]
    tab.view.set_selection([n.id for n in nodes])
    panel = inspector.node
    assert "3 boxes selected" in panel.header.text() and "3 nodes" in panel.header.text()
    assert panel.tree.find_row("MatMul", "Operators").text(1) == "× 2"
    assert panel.tree.find_row("Relu", "Operators").text(1) == "× 1"
    assert panel.tree.find_row("x", "Tensors in") is not None
    assert panel.tree.find_row("logits", "Tensors out") is not None


def test_node_panel_follows_a_collapse_to_the_group(qtbot, tmp_path):
    tab, inspector = open_tab(qtbot, save(tiny_mlp(), tmp_path / "m.onnx"))
    tab.layoutChanged.connect(
        lambda layout: inspector.follow_layout(tab.model, tab.state, layout))
    relu = next(n for n in tab.model.graph.nodes if n.op_type == "Relu")
    tab.view.set_selection([relu.id])
    assert inspector.node.tree.find_row("Type", "Node").text(1) == "Relu"
    tab.collapse_all()
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data.box(relu.id) is None,
                    timeout=30000)
    panel = inspector.node
    assert panel.box_id == "/layer1" and "group <b>layer1</b>" in panel.header.text()
    assert panel.tree.find_row("Relu", "Operators") is not None
