"""Cancel on the Profile and Compare panels, in the real window on a model slow enough
that its run is still going when the user cancels: the job stops, no result lands, the
panel says "Cancelled" and is ready for the next request."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.conftest import shown_window
from tests.runner_models import slow_model

STOPPED = 60000  # ms for the cancelled worker to return; its 1000 runs would take far longer


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 MatMul+Tanh on 512×512: each run is billions of multiply-adds."""
    return slow_model(tmp_path_factory.mktemp("cancel") / "slow.onnx", size=512, depth=60)


@pytest.fixture
def window(qtbot, slow: Path) -> tuple[MainWindow, ModelTab]:
    w = shown_window(qtbot, 1400, 900)
    tab = w.open_paths([str(slow)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    return w, tab


def _stopped(qtbot) -> None:
    """The cancelled worker returned (its onnxruntime run was terminated); anything it
    might still send has been delivered."""
    assert TaskRunner.wait_all(STOPPED)
    qtbot.wait(50)


def test_cancel_button_stops_a_profile_and_the_panel_runs_the_next(qtbot, window) -> None:
    w, tab = window
    panel = w.insight.profile_panel
    w.show_panel("profile")
    assert not panel.job.cancel_button.isVisibleTo(panel)  # nothing runs: no Cancel
    panel.runs_spin.setValue(1000)
    qtbot.mouseClick(panel.profile_button, Qt.MouseButton.LeftButton)
    assert panel.job.cancel_button.isVisible() and panel.job.cancel_button.isEnabled()
    assert panel.job.progress.isVisible()
    assert panel.status_text() == "Profiling 1000 run(s) of random inputs…"
    assert not panel.profile_button.isEnabled()

    qtbot.mouseClick(panel.job.cancel_button, Qt.MouseButton.LeftButton)
    assert panel.status_text() == "Cancelled"
    assert not panel.job.cancel_button.isVisible() and not panel.job.progress.isVisible()
    assert panel.profile_button.isEnabled()
    _stopped(qtbot)
    assert panel.result() is None and panel.error_text() == ""
    assert panel.status_text() == "Cancelled"
    assert tab.view.overlay() is None  # no heatmap from the cancelled profile

    panel.runs_spin.setValue(1)
    panel.warmup_spin.setValue(0)
    qtbot.mouseClick(panel.profile_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.result() is not None, timeout=120000)
    assert panel.node_table().model().rowCount() > 0
    assert not panel.job.cancel_button.isVisible() and panel.status_text() == ""


def test_escape_in_the_compare_panel_cancels_its_compare(qtbot, window) -> None:
    w, tab = window
    panel = w.insight.compare_panel
    w.show_panel("compare")
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    panel.form.tolerance_edit.setFocus()
    qtbot.keyClick(panel.form.tolerance_edit, Qt.Key.Key_Escape)
    assert panel.status_text() == ""  # Escape cancels only a running job

    qtbot.mouseClick(panel.form.compare_button, Qt.MouseButton.LeftButton)
    assert panel.job.cancel_button.isVisible() and panel.job.cancel_button.isEnabled()
    # the two configurations as the form names them, not their internal keys
    assert panel.status_text() == (f"Running {panel.form.a_combo.currentText()} and "
                                   f"{panel.form.b_combo.currentText()} on random inputs…")
    assert "ort:" not in panel.status_text()
    assert not panel.form.compare_button.isEnabled()
    panel.form.tolerance_edit.setFocus()
    qtbot.keyClick(panel.form.tolerance_edit, Qt.Key.Key_Escape)
    assert panel.status_text() == "Cancelled"
    assert not panel.job.cancel_button.isVisible()
    assert panel.form.compare_button.isEnabled()
    _stopped(qtbot)
    assert panel.result() is None and panel.error_text() == ""
    assert panel.hint.isVisible()  # still the explanation, not a half result
    assert tab.view.overlay() is None


@pytest.mark.parametrize("how", ["close", "replace"])
def test_closing_the_tab_kills_the_cost_tables_inference_child(qtbot, tmp_path: Path,
                                                              monkeypatch, how: str) -> None:
    """Issue 34: the Cost dock counts a large graph's shapes in a child process, which
    ran on after its tab closed (or its model was replaced). Now the task's cancel stops
    the child: the process is gone, its folder removed, and nothing is shown as an error."""
    from onnxstudio.concurrency import child as child_module
    from onnxstudio.model.open import ISOLATE_INFERENCE_NODES
    from tests.builders import relu_chain, save

    started: list[child_module.Child] = []
    real_init = child_module.Child.__init__

    def recording(self: child_module.Child, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        if args and args[0] == child_module.INFER_SHAPES:
            started.append(self)

    monkeypatch.setattr(child_module.Child, "__init__", recording)
    path = save(relu_chain(ISOLATE_INFERENCE_NODES * 3), tmp_path / "long.onnx")
    window = shown_window(qtbot, 1400, 900)
    tab = window.open_paths([str(path)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.model is not None, timeout=60000)
    started.clear()  # the open's own inference child, if any, has ended
    window.cost.show_cost()
    qtbot.waitUntil(lambda: bool(started), timeout=30000)
    child = started[0]
    assert child.process.poll() is None  # still starting: Python is not up yet
    if how == "close":
        window.close_tab(window.tabs.indexOf(tab))
    else:  # the tab's model replaced (an edit, a reload) while the old one is counted
        tab.model = None
        window.cost.show_model(tab, None)
    qtbot.waitUntil(lambda: child.process.poll() is not None, timeout=10000)
    assert child.process.returncode != 0  # killed, not finished
    assert child.stopped
    _stopped(qtbot)
    assert child.folder is not None and not child.folder.exists()
    panel = window.cost.cost_panel
    assert not panel.busy and panel.banner.isHidden() and panel.result() is None
