"""Test data in the window: a test_data_set_N folder dropped on the window shows the verdict
per output; on a failure, Compare runs the set's inputs through onnxruntime and the
reference evaluator and selects the first diverging node; a folder of sets is a table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from PySide6.QtCore import Qt

from tests.builders import make_model, save
from tests.conftest import shown_window
from tests.test_main_window import drop, wait_open


def _softmax11(path: Path) -> onnx.ModelProto:
    """Relu -> Softmax-11 on [2,3,4,5]: onnxruntime flattens at axis 1 as opset 11 says,
    onnx's reference evaluator (which writes expected outputs) does not."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Softmax", ["r"], ["y"], name="head")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])])
    model = make_model(graph, opset=11)
    model.ir_version = 7
    save(model, path)
    return model


def _sets(folder: Path, model: onnx.ModelProto, count: int, reference: set[int]) -> list[Path]:
    """Sets whose expected outputs come from onnxruntime's own semantics (exact Softmax-11),
    or, for the indices in ``reference``, from onnx's reference evaluator."""
    out = []
    rng = np.random.default_rng(3)
    for i in range(count):
        x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
        r = np.maximum(x, 0).reshape(2, 60)
        e = np.exp(r - r.max(axis=1, keepdims=True))
        y = (e / e.sum(axis=1, keepdims=True)).reshape(2, 3, 4, 5).astype(np.float32)
        if i in reference:
            y = ReferenceEvaluator(model).run(None, {"x": x})[0]
        s = folder / f"test_data_set_{i}"
        s.mkdir(parents=True)
        (s / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
        (s / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
        out.append(s)
    return out


@pytest.fixture
def window(qtbot):
    return shown_window(qtbot)


def test_a_dropped_failing_set_shows_the_verdict_and_compare_finds_the_node(
        window, qtbot, tmp_path: Path) -> None:
    model = _softmax11(tmp_path / "softmax11.onnx")
    failing = _sets(tmp_path, model, 1, reference={0})[0]
    tab = wait_open(qtbot, window.open_paths([str(tmp_path / "softmax11.onnx")])[0])
    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=60000):
        drop(window, [failing])
    view = run_panel.results.verdict_view
    assert view.isVisible()
    assert view.header.text().startswith(
        "fail: 1 of 1 outputs differ from test_data_set_0 (y: ")
    assert [view.table.item(0, c).text() for c in (0, 1)] == ["y", "✗ fail"]
    assert view.table.item(0, 3).text() == "rtol 1e-3, atol 1e-7"
    assert view.compare_button.isVisible()
    compare_panel = window.insight.compare_panel
    qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare_panel.result() is not None, timeout=60000)
    result = compare_panel.result()
    assert result.a.label == "ort:cpu:all" and result.b.label == "reference"
    first = result.first_divergence
    assert first is not None and first.op_type == "Softmax" and first.name == "head"
    assert "known deviation" in first.known
    assert tab.view.selected_ids() == [first.id]
    assert window.docks["compare"].isVisible()
    assert compare_panel.options().b.label == "reference"  # the form shows what ran
    assert "known deviation" in window.statusBar().currentMessage()


def test_a_folder_of_sets_dropped_on_the_run_panel_is_a_table(
        window, qtbot, tmp_path: Path) -> None:
    model = _softmax11(tmp_path / "softmax11.onnx")
    _sets(tmp_path / "sets", model, 3, reference={2})
    wait_open(qtbot, window.open_paths([str(tmp_path / "softmax11.onnx")])[0])
    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=60000):
        drop(run_panel, [tmp_path / "sets"])
    view = run_panel.results.verdict_view
    assert view.header.text() == ("3 test sets: 2 pass, 1 fail, 0 cannot run — Compare runs "
                                  "test_data_set_2")
    rows = [[view.table.item(r, c).text() for c in range(2)] for r in range(3)]
    assert rows == [["test_data_set_0", "✓ pass"], ["test_data_set_1", "✓ pass"],
                    ["test_data_set_2", "✗ fail"]]
    assert run_panel.error_text() == ""
