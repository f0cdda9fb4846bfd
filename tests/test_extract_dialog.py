"""Model → Extract Selection…: the preview dialog, the worker, and "open it in a new tab"."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

from onnxstudio.model import load_model
from onnxstudio.model.cut import cut_from_nodes
from onnxstudio.model.index import node_by_id
from onnxstudio.ui.dialogs.extract_dialog import (
    ExtractDialog,
    ExtractFlow,
    selection_node_ids,
    start_extract,
)
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.conftest import ladder_model, shared_model, shown_window


@pytest.fixture(autouse=True)
def _drain_workers():
    yield
    TaskRunner.wait_all()


def _rows(dialog: ExtractDialog) -> dict[str, list[tuple[str, str, str]]]:
    out = {}
    for i in range(dialog.tree.topLevelItemCount()):
        top = dialog.tree.topLevelItem(i)
        out[top.text(0).split(" ")[0]] = [
            (top.child(j).text(0), top.child(j).text(1), top.child(j).text(2))
            for j in range(top.childCount())]
    return out


def test_dialog_shows_boundary_tensors_and_retyped_cuts(qtbot) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    convs = [n for n in model.graph.nodes if n.op_type == "Conv"]
    ids = [n.id for n in model.graph.nodes[convs[1].index:convs[1].index + 4]]
    dialog = ExtractDialog(None, model, cut_from_nodes(model, ids))
    qtbot.addWidget(dialog)
    rows = _rows(dialog)
    assert rows["Inputs"] == [("Pooling66_Output_0", "float32", "1×8×14×14")]
    assert rows["Outputs"] == [("Pooling160_Output_0", "float32", "1×16×4×4")]
    assert "4 nodes" in dialog.heading.text() and "Conv" in dialog.contents.text()
    assert dialog.extract_button.isEnabled()

    dialog.outputs_edit.setText("Nope")
    dialog.outputs_edit.editingFinished.emit()
    assert "no tensor named 'Nope'" in dialog.error.text()
    assert not dialog.extract_button.isEnabled() and dialog.cut is None

    dialog.inputs_edit.setText("Input3")  # everything between the input and the first ReLU
    dialog.outputs_edit.setText("ReLU32_Output_0")
    dialog.outputs_edit.editingFinished.emit()
    assert dialog.error.text() == "" and dialog.extract_button.isEnabled()
    assert dialog.cut is not None and [t.name for t in dialog.cut.inputs] == ["Input3"]
    assert _rows(dialog)["Outputs"] == [("ReLU32_Output_0", "float32", "1×8×28×28")]


def test_selected_group_stands_for_its_nodes() -> None:
    model = load_model(ladder_model("bert12.onnx"))
    from onnxstudio.layout.scopes import graph_scope_tree

    tree = graph_scope_tree(model.graph)
    group = next(g for g in tree.root.groups() if g.label.endswith("layer.4"))
    ids = selection_node_ids(model, [group.id])
    names = {node_by_id(model, i).name for i in ids}  # type: ignore[union-attr]
    assert names and all("/encoder/layer.4/" in n for n in names)
    assert len(ids) == group.node_count


def test_ctrl_shift_x_extracts_and_opens_a_new_tab(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    window = shown_window(qtbot, 1200, 800)
    source = shared_model("zoo/mnist/mnist.onnx")
    (tab,) = window.open_paths([str(source)])
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    relus = [n.id for n in tab.model.graph.nodes if n.op_type == "Relu"]
    tab.view.set_selection(relus[:1])
    dest = tmp_path / "relu.onnx"
    asked: list[str] = []
    saves = iter([str(source), str(dest)])  # first the open model itself: refused, asked again

    monkeypatch.setattr(ExtractDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (next(saves), ""))
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text: asked.append(text))

    def ask_next(_flow, text: str) -> str:
        asked.append(text)
        return "open"

    monkeypatch.setattr(ExtractFlow, "ask_next", ask_next)
    window.commands["extract"].trigger()
    qtbot.waitUntil(lambda: len(window.model_tabs()) == 2, timeout=30000)
    assert "mnist.onnx is open" in asked[0]
    assert "Wrote relu.onnx (1 node" in asked[1] and "Open it in a new tab?" in asked[1]
    onnx.checker.check_model(str(dest))
    new_tab = window.model_tabs()[1]
    assert new_tab.path == dest
    qtbot.waitUntil(lambda: not new_tab.busy and new_tab.model is not None, timeout=60000)
    assert [n.op_type for n in new_tab.model.graph.nodes] == ["Relu"]


def test_nothing_selected_says_what_to_do(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: told.append(text))
    assert start_extract(None, model, []) is None
    assert "select nodes" in told[0] and "Ctrl-click" in told[0]


def test_failure_is_reported(qtbot, tmp_path: Path) -> None:
    model = load_model(shared_model("zoo/mnist/mnist.onnx"))
    flow = start_extract(None, model, ["n3"], dest=tmp_path / "missing" / "x.onnx")
    assert flow is not None
    with qtbot.waitSignal(flow.failed, timeout=30000) as blocker:
        pass
    assert "does not exist" in blocker.args[0]


def test_run_this_part_matches_the_full_model(qtbot, tmp_path: Path) -> None:
    model = load_model(ladder_model("bert12.onnx"))
    ids = [n.id for n in model.graph.nodes if n.name.startswith("/encoder/layer.7/")]
    flow = start_extract(None, model, ids, dest=tmp_path / "layer7.onnx")
    assert flow is not None
    with qtbot.waitSignal(flow.finished, timeout=30000):
        pass
    with qtbot.waitSignal(flow.partChecked, timeout=60000) as blocker:
        flow.run_part()
    checks = blocker.args[0]
    assert checks and all(c.matches for c in checks), [c.describe() for c in checks]
    assert any("layer.7/output/LayerNorm" in c.name for c in checks)


def test_run_this_part_feeds_the_last_real_input(qtbot, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """After a digit is run, "Run This Part" checks the part on that digit, not on noise."""
    import numpy as np

    from onnxstudio.resources import resource
    from onnxstudio.runner import cut_check
    from onnxstudio.ui.main_window import sample_model_path
    from tests.test_main_window import drop, wait_open

    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    tab = wait_open(qtbot, window.open_paths([str(sample_model_path())])[0])
    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=120000):
        drop(window, [resource("sample", "digit_7.png")])
    fed: list[dict] = []
    real = cut_check.full_model_values

    def spy(*args, **kwargs):
        fed.append(kwargs.get("feeds"))
        return real(*args, **kwargs)

    monkeypatch.setattr(cut_check, "full_model_values", spy)
    assert tab.model is not None
    tail = [n.id for n in tab.model.graph.nodes[-3:]]
    flow = start_extract(window, tab.model, tail, dest=tmp_path / "tail.onnx",
                         last_input=window._last_run_input)
    assert flow is not None
    with qtbot.waitSignal(flow.finished, timeout=30000):
        pass
    with qtbot.waitSignal(flow.partChecked, timeout=60000) as blocker:
        flow.run_part()
    assert all(c.matches for c in blocker.args[0])
    assert "digit_7.png" in flow.source
    request = window._last_run_input()
    assert request is not None and not request.random
    _, expected = cut_check.request_input(tab.model.path, request)
    (name, value), = fed[0].items()
    np.testing.assert_array_equal(value, expected[name])
