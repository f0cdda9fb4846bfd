"""Model → Split into Stages…: the plan shows on the canvas before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from onnxstudio.ui.dialogs.split_dialog import SplitDialog, handed_over
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import save
from tests.conftest import shown_window
from tests.test_main_window import wait_open
from tests.test_split import skip_mlp


@pytest.fixture(autouse=True)
def _drain_workers():
    yield
    TaskRunner.wait_all()


@pytest.fixture
def window(qtbot, tmp_path: Path) -> MainWindow:
    w = shown_window(qtbot)
    wait_open(qtbot, w.open_paths([str(save(skip_mlp(), tmp_path / "skip.onnx"))])[0])
    return w


def _open_dialog(window: MainWindow, qtbot) -> SplitDialog:
    dialog = window.split_into_stages()
    assert dialog is not None
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
    return dialog


def test_preview_colours_stages_and_marks_the_cut(window: MainWindow, qtbot) -> None:
    dialog = _open_dialog(window, qtbot)
    tab = window.current_tab()
    assert dialog.table.rowCount() == 4
    shares = [dialog.table.cellWidget(r, 1).format() for r in range(4)]  # type: ignore[union-attr]
    assert all(s.endswith("%") for s in shares)
    overlay = tab.view.overlay()
    assert overlay is not None and overlay.data.kind == "stages"
    assert {b for b in overlay.badges.values()} >= {"S1", "S4"}
    layout = tab.view.graph_layout()
    marked = {layout.edges[i].value for i in tab.view.paint_state().selected_edges}
    assert dialog.plan is not None and marked == handed_over(dialog.plan) and marked
    assert "Time" in dialog.cost_combo.itemText(2)
    assert not dialog.cost_combo.model().item(2).isEnabled()  # no profile yet
    with qtbot.waitSignal(dialog.planned, timeout=30000):
        dialog.stages_spin.setValue(3)
    assert dialog.table.rowCount() == 3
    dialog.close()
    assert tab.view.overlay() is None  # the canvas is the user's again
    assert not tab.view.paint_state().selected_edges


def test_write_stages_writes_the_manifest_and_checks_the_chain(window: MainWindow, qtbot,
                                                               tmp_path: Path) -> None:
    dialog = _open_dialog(window, qtbot)
    dialog.hide()  # no message box in a test
    out = tmp_path / "stages"
    assert not out.exists()  # planning wrote nothing
    with qtbot.waitSignal(dialog.written, timeout=60000) as blocker:
        dialog.write_to(out)
    written, check = blocker.args[0]
    assert written.manifest == out / "manifest.json"
    assert check.ok
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["file"] for s in manifest["stages"]] == [f"stage_{k}.onnx" for k in range(1, 5)]
    assert "match the whole model" in dialog.summary.text()


def test_an_llm_plans_writable_stages_in_the_window(qtbot, tmp_path: Path) -> None:
    from tests.llm_builders import save_tiny_llm

    w = shown_window(qtbot)
    wait_open(qtbot, w.open_paths([str(save_tiny_llm(tmp_path / "tiny", layers=4))])[0])
    assert w.tabs.tabText(w.tabs.currentIndex()) == "tiny/model.onnx"  # not "model.onnx"
    dialog = _open_dialog(w, qtbot)
    assert dialog.plan is not None and dialog.plan.unwritable(w.current_tab().model) is None
    assert dialog.write_button.isEnabled()
    dialog.close()


def test_a_plan_that_cannot_be_written_is_refused_before_asking(qtbot, tmp_path: Path) -> None:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.builders import make_model

    rng = np.random.default_rng(0)
    nodes, inits, previous = [], [], "x"
    for i in range(4):  # every layer ends in an operator nobody knows the types of
        inits.append(numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32),
                                             f"W{i}"))
        nodes += [helper.make_node("MatMul", [previous, f"W{i}"], [f"m{i}"], name=f"/l{i}/MM"),
                  helper.make_node("Mystery", [f"m{i}"], [f"h{i}"], domain="x.custom",
                                   name=f"/l{i}/Mystery")]
        previous = f"h{i}"
    graph = helper.make_graph(nodes, "opaque",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info(previous, TensorProto.FLOAT,
                                                             [1, 8])], initializer=inits)
    model = make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid("x.custom", 1)])
    w = shown_window(qtbot)
    wait_open(qtbot, w.open_paths([str(save(model, tmp_path / "opaque.onnx"))])[0])
    dialog = _open_dialog(w, qtbot)
    assert not dialog.write_button.isEnabled()
    assert "Cannot be written" in dialog.summary.text()
    assert "dtype or rank" in dialog.write_button.toolTip()
    dialog.close()


def test_a_profiled_model_splits_by_time_with_the_times_made_on_the_planner(
        window: MainWindow, qtbot, monkeypatch) -> None:
    """After a real profile the "Time" balance is offered and plans by the profile's
    times; those (one entry per node: dag100k's 100k took 40-60 ms) are made by the
    planner's worker, not on the GUI thread as the dialog opens."""
    import threading

    from onnxstudio.runner.profile import ProfileResult
    from onnxstudio.ui.insight.profile_panel import ProfileOptions

    made: list[threading.Thread] = []
    original = ProfileResult.times_by_index

    def noted(self: ProfileResult) -> dict[int, float]:
        made.append(threading.current_thread())
        return original(self)

    monkeypatch.setattr(ProfileResult, "times_by_index", noted)
    window.insight.start_profile(ProfileOptions("disable", 1, 0))
    qtbot.waitUntil(lambda: window.insight.profile_panel.result() is not None, timeout=60000)
    dialog = _open_dialog(window, qtbot)
    assert made == []  # not asked while planning by another cost
    time_item = dialog.cost_combo.model().item(2)
    assert time_item.isEnabled()
    with qtbot.waitSignal(dialog.planned, timeout=30000) as planned:
        dialog.cost_combo.setCurrentIndex(2)
    assert planned.args[0].by == "time" and dialog.table.rowCount() == 4
    assert made and threading.main_thread() not in made
    dialog.close()
