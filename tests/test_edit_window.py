"""Editing in the window: in-place edits, context menus, undo/redo, Save As, scripts, Run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from onnxstudio.cli import main
from onnxstudio.runner.compare import parse_config
from onnxstudio.ui import tasks
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.edit.room import SCRIPT_FILTER
from onnxstudio.ui.insight.compare_options import CompareOptions
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from tests.conftest import shared_model, shown_window

MNIST = "zoo/mnist/mnist.onnx"
TIMEOUT = 60000


@pytest.fixture
def window(qtbot, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    def unexpected(_parent, title, text, *args, **kwargs):  # a modal box would hang the test
        raise AssertionError(f"{title}: {text}")

    monkeypatch.setattr(QMessageBox, "warning", unexpected)
    # pytest-qt closes the window after the test: unsaved edits are discarded then.
    monkeypatch.setattr(QMessageBox, "exec", lambda _self: QMessageBox.StandardButton.Discard)
    return shown_window(qtbot)


@pytest.fixture
def refusals(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the user would read in the "Edit not applied" message box."""
    seen: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda _parent, _title, text, *a, **k: seen.append(text))
    return seen


def open_model(qtbot, window: MainWindow, path: Path) -> ModelTab:
    tab = window.open_paths([str(path)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=TIMEOUT)
    return tab


def settle(qtbot, window: MainWindow, tab: ModelTab) -> None:
    """Wait for the edited model to be rebuilt and laid out, and for the turns that
    fill the panels and show the history."""
    controller = window.edits.controllers[tab]
    qtbot.waitUntil(lambda: not controller.busy and not tab.busy and not tasks._turns,
                    timeout=TIMEOUT)


def history(window: MainWindow) -> list[str]:
    model = window.edits.history.view.model()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def test_inline_rename_marks_the_tab_and_undo_redo_are_named(qtbot, window: MainWindow
                                                             ) -> None:
    tab = open_model(qtbot, window, shared_model(MNIST))
    tree = window.inspector.model.tree
    item = tree.find_row("Input3", "Inputs")
    assert item is not None
    tree._start_edit(item, 0)  # a double-click on the name
    item.setText(0, "image")
    settle(qtbot, window, tab)
    assert "image" in tab.model.graph.inputs
    assert "in:image" in {b.id for b in tab.layout_data.boxes}
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "mnist.onnx ●"
    assert window.windowTitle().startswith("mnist.onnx ●")
    assert tree.find_row("image", "Inputs") is not None  # the panel shows the edited model
    assert history(window) == ["Original model", "Rename input Input3 → image"]
    assert window.docks["history"].isVisible()
    assert window.edits.act_undo.text() == "&Undo Rename input Input3 → image"
    assert window.edits.act_undo.shortcut() == QKeySequence("Ctrl+Z")
    assert QKeySequence("Ctrl+Shift+Z") in window.edits.act_redo.shortcuts()

    window.edits.act_undo.trigger()
    settle(qtbot, window, tab)
    assert "Input3" in tab.model.graph.inputs
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "mnist.onnx"
    window.edits.act_redo.trigger()
    settle(qtbot, window, tab)
    assert "image" in tab.model.graph.inputs


def test_attribute_edited_in_the_node_panel_is_typed(qtbot, window: MainWindow) -> None:
    tab = open_model(qtbot, window, shared_model(MNIST))
    tab.view.set_selection(["n1"])  # Convolution28
    tree = window.inspector.node.tree
    item = tree.find_row("strides", "Attributes")
    assert item is not None and item.text(1) == "[1, 1]"
    tree._start_edit(item, 1)
    item.setText(1, "2, 2")
    settle(qtbot, window, tab)
    node = tab.model.graph.nodes[1]
    assert node.attribute("strides").value == [2, 2]
    assert window.inspector.node.tree.find_row("strides", "Attributes").text(1) == "[2, 2]"
    assert history(window)[-1] == "Set Convolution28.strides"


def test_context_menu_offers_edits_and_a_refused_removal_says_why(
        qtbot, window: MainWindow, refusals: list[str]) -> None:
    tab = open_model(qtbot, window, shared_model(MNIST))
    menu = QMenu()
    window.edits.fill_context_menu(menu, tab.model, "box", "n10")  # Times212 (MatMul)
    texts = [a.text() for a in menu.actions()]
    assert texts[:2] == ["Rename Node…", "Remove Node (Bypass)"]  # MatMul: no attributes
    assert "Add Output 'Times212_Output_0'" in texts
    next(a for a in menu.actions() if a.text() == "Remove Node (Bypass)").trigger()
    assert refusals and "'Times212' (MatMul) has 2 data inputs" in refusals[0]
    assert window.edits.controllers[tab].edits == []
    conv_menu = QMenu()
    window.edits.fill_context_menu(conv_menu, tab.model, "box", "n1")
    assert "Set Attribute…" in [a.text() for a in conv_menu.actions()]
    edge_menu = QMenu()
    window.edits.fill_context_menu(edge_menu, tab.model, "edge", "Pooling66_Output_0")
    assert [a.text() for a in edge_menu.actions()] == [
        "Rename Tensor 'Pooling66_Output_0'…", "Add as Model Output"]
    io_menu = QMenu()
    window.edits.fill_context_menu(io_menu, tab.model, "box", "out:Plus214_Output_0")
    assert [a.text() for a in io_menu.actions()] == [
        "Rename Output…", "Set Dimensions…", "Remove Output"]


def test_window_save_is_byte_identical_to_the_headless_script(
        qtbot, window: MainWindow, tmp_path: Path, refusals: list[str]) -> None:
    source = shared_model(MNIST)
    tab = open_model(qtbot, window, source)
    room = window.edits
    room.apply([{"op": "remove_node", "node": "ReLU32"}])
    room.apply([{"op": "set_metadata", "key": "note", "value": "edited in the window"}])
    room.edit_key("dims:in:Input3", "[N, 1, 28, 28]")
    room.act_undo.trigger()  # undone edits are not part of the result
    room.apply([{"op": "add_output", "tensor": "Pooling66_Output_0"}])
    settle(qtbot, window, tab)
    assert room.save_as(tab, tmp_path / "window.onnx")
    assert window.tabs.tabText(window.tabs.indexOf(tab)) == "mnist.onnx"  # saved
    script = tmp_path / "edits.json"
    script.write_text(room.controllers[tab].script())
    assert main(["edit", str(source), str(tmp_path / "cli.onnx"), "--script", str(script)]) == 0
    assert (tmp_path / "window.onnx").read_bytes() == (tmp_path / "cli.onnx").read_bytes()
    assert not room.save_as(tab, source)  # never over the original
    assert "refusing to write over" in refusals[-1]


def test_run_panel_runs_the_edited_model(qtbot, window: MainWindow) -> None:
    tab = open_model(qtbot, window, shared_model(MNIST))
    window.edits.apply([{"op": "add_output", "tensor": "Pooling66_Output_0"}])
    settle(qtbot, window, tab)
    panel = window.run_panel
    assert panel.model_label.text() == "mnist.onnx (as edited)"
    with qtbot.waitSignal(panel.runFinished, timeout=TIMEOUT) as blocker:
        panel.run_random()
    (outcome,) = blocker.args[0]
    shapes = {v.name: v.shape for v in outcome.views}
    assert shapes["Pooling66_Output_0"] == [1, 8, 14, 14]


def test_compare_before_any_run_sees_the_edits(qtbot, window: MainWindow,
                                              tmp_path: Path) -> None:
    """An edit forgets the last run; Compare then still runs the model as edited, so
    against the file on disk it finds the weight the user replaced."""
    source = sample_model_path()
    proto = onnx.load(str(source))
    index, conv = next((i, n) for i, n in enumerate(proto.graph.node) if n.op_type == "Conv")
    weight = next(t for t in proto.graph.initializer if t.name == conv.input[1])
    np.save(tmp_path / "w.npy", numpy_helper.to_array(weight) * 1.5)
    tab = open_model(qtbot, window, source)
    window.edits.apply([{"op": "set_initializer", "name": weight.name,
                         "npy": str(tmp_path / "w.npy")}])
    settle(qtbot, window, tab)
    assert not window.run_panel.has_run()
    insight = window.insight
    cpu = parse_config("ort:cpu:disabled")
    insight.start_compare(CompareOptions(cpu, cpu, 1e-3, source))
    qtbot.waitUntil(lambda: insight.compare_panel.result() is not None, timeout=TIMEOUT)
    result = insight.compare_panel.result()
    assert result is not None and result.first_divergence is not None
    assert result.first_divergence.id == f"n{index}"


def test_closing_asks_about_unsaved_edits(qtbot, window: MainWindow,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    tab = open_model(qtbot, window, shared_model(MNIST))
    window.edits.apply([{"op": "set_metadata", "key": "k", "value": "v"}])
    settle(qtbot, window, tab)
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard]
    monkeypatch.setattr(QMessageBox, "exec", lambda _self: answers.pop(0))
    window.close_tab(window.tabs.indexOf(tab))
    assert window.tabs.indexOf(tab) >= 0  # Cancel keeps it open, edits and all
    window.close_tab(window.tabs.indexOf(tab))
    assert window.tabs.count() == 0 and not answers


def test_apply_script_is_one_undo_step(qtbot, window: MainWindow, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    tab = open_model(qtbot, window, shared_model(MNIST))
    script = tmp_path / "fix.json"
    script.write_text('{"onnxstudio_edits": 1, "edits": ['
                      '{"op": "rename", "kind": "input", "from": "Input3", "to": "pixels"},'
                      '{"op": "set_dim", "input": "pixels", "axis": 0, "value": "N"}]}')
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *a, **k: (str(script), SCRIPT_FILTER))
    window.edits.act_apply_script.trigger()
    settle(qtbot, window, tab)
    assert tab.model.graph.values["pixels"].type.shape[0] == "N"
    assert history(window) == ["Original model", "Apply fix.json"]
    window.edits.act_undo.trigger()
    settle(qtbot, window, tab)
    assert "Input3" in tab.model.graph.inputs and window.edits.controllers[tab].edits == []


def _conv_model(tmp_path: Path) -> Path:
    from onnx import TensorProto, helper

    weight = numpy_helper.from_array(np.ones((8, 4, 3, 3), np.float32), "W")
    conv = helper.make_node("Conv", ["x", "W"], ["y"], name="conv", kernel_shape=[3, 3])
    relu = helper.make_node("Relu", ["y"], ["z"], name="relu")
    graph = helper.make_graph(
        [conv, relu], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], [weight],
        value_info=[helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "conv.onnx"
    onnx.save(model, str(path))
    return path


def test_an_edit_that_cannot_run_is_said_before_saving(qtbot, window: MainWindow, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Conv group 2 with a weight made for group 1 passes onnx's checker; onnxruntime
    refuses to run it. The History says so and Save As asks first."""
    tab = open_model(qtbot, window, _conv_model(tmp_path))
    window.edits.apply([{"op": "set_attribute", "node": "conv", "name": "group", "value": 2}])
    settle(qtbot, window, tab)
    report = window.edits.controllers[tab].report
    assert report.ok and "kernel channels * group" in report.cannot_run
    assert "onnxruntime cannot run it" in window.edits.history.checks.text()
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda _p, title, *a, **k: (
        asked.append(title), QMessageBox.StandardButton.Cancel)[1])
    dest = tmp_path / "edited.onnx"
    assert not window.edits.save_as(tab, dest)
    assert asked == ["The edited model does not run"] and not dest.exists()


def test_an_attribute_edit_refreshes_the_shapes_on_the_canvas(qtbot, window: MainWindow,
                                                              tmp_path: Path) -> None:
    """strides 1 → 2 on a Conv whose output the exporter annotated 1×8×6×6: the edge now
    reads 1×8×3×3 (the stale annotation stayed)."""
    tab = open_model(qtbot, window, _conv_model(tmp_path))
    window.edits.apply([{"op": "set_attribute", "node": "conv", "name": "strides",
                         "value": [2, 2]}])
    settle(qtbot, window, tab)
    labels = {e.value: e.label for e in tab.layout_data.edges}
    assert labels["y"] == "1×8×3×3"


def opened_checking_in_a_child(qtbot, window: MainWindow, path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> ModelTab:
    """``path`` opened; from then on every edit's checks go to the child (as a large
    model's do), and this process can run none of them: onnx's checker and inference
    and onnxruntime's session creation hold the GIL for their whole call, which froze
    the window (issue 34)."""
    import onnxruntime

    from onnxstudio.model import open as model_open
    from onnxstudio.runner import edit_check
    from onnxstudio.ui.edit import controller

    tab = open_model(qtbot, window, path)

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("checked in the window's process")

    monkeypatch.setattr(controller, "CHILD_NODES", 0)
    monkeypatch.setattr(edit_check, "check_edited", refuse)
    monkeypatch.setattr(model_open, "infer_shapes", refuse)
    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    return tab


def test_a_large_model_s_edit_is_checked_and_shaped_in_a_child(
        qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's answer is what the in-process checks give: the new shapes on the
    canvas, onnxruntime's refusal of a Conv group its weight does not fit."""
    tab = opened_checking_in_a_child(qtbot, window, _conv_model(tmp_path), monkeypatch)
    window.edits.apply([{"op": "set_attribute", "node": "conv", "name": "strides",
                         "value": [2, 2]}])
    settle(qtbot, window, tab)
    assert {e.value: e.label for e in tab.layout_data.edges}["y"] == "1×8×3×3"
    assert window.edits.controllers[tab].report.ok
    window.edits.apply([{"op": "set_attribute", "node": "conv", "name": "group", "value": 2}])
    settle(qtbot, window, tab)
    report = window.edits.controllers[tab].report
    assert report.ok and "kernel channels * group" in report.cannot_run
    assert "onnxruntime cannot run it" in window.edits.history.checks.text()


def test_a_large_model_s_broken_edit_is_one_line_and_the_window_goes_on(
        qtbot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tab = opened_checking_in_a_child(qtbot, window, _conv_model(tmp_path), monkeypatch)
    window.edits.apply([{"op": "set_attribute", "node": "conv", "name": "pads",
                         "value": [1, 1]}])  # a 2-D Conv needs four
    settle(qtbot, window, tab)
    report = window.edits.controllers[tab].report
    [error] = report.errors
    assert error.startswith("shape inference:") and "pads has incorrect size" in error
    assert "\n" not in error
    # the original fails the checker alike: a warning, from the original the child read
    assert report.warnings == ["onnx.checker: Field 'shape' of 'type' is required but "
                               "missing. (the original fails it too)"]
    window.edits.act_undo.trigger()
    settle(qtbot, window, tab)
    assert window.edits.controllers[tab].report.ok
    assert tab.model.graph.nodes[0].attribute("pads") is None
