"""View → Hide Nodes (issue 34, netron#1525): Constant, Identity and the shape chains
exporters emit leave the drawing, the layout closes the gaps, the choice is remembered
and the status line counts what is hidden."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxstudio.model import load_model
from onnxstudio.model.hiding import hidden_nodes
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.conftest import shown_window


def chained(path: Path) -> Path:
    """x → Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) → Identity → Relu,
    and an embedding Gather whose indices come from the shape (it stays)."""
    table = numpy_helper.from_array(np.ones((16, 8), np.float32), "table")
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one"), table]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["batch"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"], name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], name="concat",
                         axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="reshape"),
        helper.make_node("Identity", ["flat"], ["same"], name="identity"),
        helper.make_node("Relu", ["same"], ["y"], name="relu"),
        helper.make_node("Gather", ["table", "batch"], ["row"], name="embed", axis=0),
    ]
    graph = helper.make_graph(
        nodes, "chained", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_shape_chains_and_identities_are_found(tmp_path: Path) -> None:
    model = load_model(chained(tmp_path / "m.onnx"))
    names = {n.index: n.name for n in model.graph.nodes}
    hide = {names[i] for i in hidden_nodes(model.graph, frozenset({"shape", "identity"}))}
    assert hide == {"shape", "gather", "unsqueeze", "concat", "identity"}  # not "embed"


@pytest.fixture
def window(qtbot) -> MainWindow:
    yield shown_window(qtbot)
    TaskRunner.wait_all()


def test_view_hide_nodes_closes_the_gaps_and_is_remembered(window: MainWindow, qtbot,
                                                           tmp_path: Path) -> None:
    tab = window.open_paths([str(chained(tmp_path / "m.onnx"))])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    ids = {n.name: n.id for n in tab.model.graph.nodes}
    assert ids["shape"] in {b.id for b in tab.layout_data.boxes}
    before = tab.layout_data
    window.hide_actions["shape"].trigger()
    window.hide_actions["identity"].trigger()
    qtbot.waitUntil(lambda: tab.layout_data is not before and not tab.busy
                    and tab.hidden_count() == 5, timeout=60000)
    boxes = {b.id for b in tab.layout_data.boxes}
    assert not {ids[n] for n in ("shape", "gather", "unsqueeze", "concat", "identity")} & boxes
    assert {ids["reshape"], ids["relu"], ids["embed"]} <= boxes
    # the Identity's gap is closed: Reshape feeds Relu directly
    assert (ids["reshape"], ids["relu"]) in {(e.source, e.target) for e in tab.layout_data.edges}
    window.update_status(tab)
    assert "5 hidden" in window.status_line.nodes.text()
    restarted = MainWindow()
    qtbot.addWidget(restarted)
    assert restarted.hide_actions["shape"].isChecked()
    assert restarted.hide_actions["identity"].isChecked()
    assert not restarted.hide_actions["constant"].isChecked()
    window.hide_actions["shape"].trigger()
    window.hide_actions["identity"].trigger()
