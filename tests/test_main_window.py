"""The main window driven as a user drives it: argv, drops, tabs, settings, hand-over."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from onnxstudio.model.index import node_by_id
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from onnxstudio.ui.single_instance import InstanceServer
from tests.builders import save, tiny_mlp
from tests.conftest import REPO, ladder_model, shared_model, shown_window
from tests.drops import drag_enter


@pytest.fixture
def window(qtbot) -> MainWindow:
    return shown_window(qtbot, 1200, 800)


def wait_open(qtbot, tab: ModelTab) -> ModelTab:
    qtbot.waitUntil(lambda: not tab.busy and (tab.layout_data is not None or bool(tab.error)),
                    timeout=60000)
    return tab


def drop(widget, paths: list[Path]) -> None:
    """A drag entering with file URLs, then the drop: what a file manager sends."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    centre = widget.rect().center()
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier)
    enter = drag_enter(centre, mime)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(widget, QDropEvent(QPointF(centre), *args))


def test_welcome_view_when_nothing_is_open(window: MainWindow, qtbot) -> None:
    assert window.central.currentWidget() is window.welcome
    assert window.welcome.no_recent.isVisible()
    assert not window.commands["export"].isEnabled()
    qtbot.mouseClick(window.welcome.sample_button, Qt.MouseButton.LeftButton)
    tab = wait_open(qtbot, window.current_tab())
    assert tab.path == sample_model_path()
    assert tab.error is None and tab.model is not None
    assert window.central.currentWidget() is window.tabs
    assert "Conv" in {b.title for b in tab.layout_data.boxes}
    window.close_tab(0)
    assert window.central.currentWidget() is window.welcome
    assert window.welcome.recent.count() == 1  # the sample is now a recent file


def test_drop_onnx_file_opens_a_tab(window: MainWindow, qtbot, tmp_path: Path) -> None:
    model = save(tiny_mlp(), tmp_path / "dropped.onnx")
    drop(window, [model])
    tab = wait_open(qtbot, window.current_tab())
    assert window.tabs.tabText(window.tabs.currentIndex()) == "dropped.onnx"
    titles = sorted(b.title for b in tab.layout_data.boxes if b.kind == "node")
    assert titles == ["Add", "MatMul", "MatMul", "Relu", "Softmax"]
    assert "5 nodes" in window.status_line.nodes.text()
    assert "ai.onnx v21" in window.status_line.opsets.text()


def test_bad_model_shows_reason_and_window_stays_usable(window: MainWindow, qtbot,
                                                        tmp_path: Path) -> None:
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x08\x07\x12\xff\xff\xff\xff\x0f")
    tab = wait_open(qtbot, window.open_paths([str(bad)])[0])
    assert tab.error is not None and tab.error.startswith("broken.onnx: ")
    page = tab._error_page
    assert page.text() == tab.error and page.isVisible()
    label = page.message  # tall enough for every wrapped line of the reason
    assert label.height() >= label.heightForWidth(label.width()) > 0
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == tab.error
    assert window.tabs.tabText(0).startswith("⚠")
    good = wait_open(qtbot, window.open_paths([str(save(tiny_mlp(), tmp_path / "ok.onnx"))])[0])
    assert good.error is None and window.tabs.count() == 2


def test_several_files_open_in_several_tabs(window: MainWindow, qtbot, tmp_path: Path) -> None:
    a = save(tiny_mlp(), tmp_path / "a.onnx")
    b = save(tiny_mlp(with_scopes=False), tmp_path / "b.onnx")
    tabs = window.open_paths([str(a), str(b)])
    for tab in tabs:
        wait_open(qtbot, tab)
    assert [window.tabs.tabText(i) for i in range(2)] == ["a.onnx", "b.onnx"]
    again = window.open_paths([str(a)])  # already open: switch, don't duplicate
    assert again[0] is tabs[0] and window.tabs.count() == 2


def test_settings_persist_across_restart(qtbot, tmp_path: Path) -> None:
    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    first.set_direction("LR")
    first.set_appearance("dark")
    first.commands["names"].setChecked(True)
    first.toggle_names()
    first.resize(first.minimumSizeHint().width() + 37, first.minimumSizeHint().height() + 23)
    size = (first.width(), first.height())
    assert size != (1400, 900)  # not the first-start default
    path = save(tiny_mlp(), tmp_path / "remember.onnx")
    wait_open(qtbot, first.open_paths([str(path)])[0])
    first.close()

    second = MainWindow()
    qtbot.addWidget(second)
    second.show()
    assert second.direction == "LR" and second.commands["direction_lr"].isChecked()
    assert second.appearance == "dark" and second.commands["theme_dark"].isChecked()
    assert second.show_names and second.commands["names"].isChecked()
    # The offscreen screen is narrower than the window, so only the height survives as is.
    assert second.height() == size[1]
    assert next(a.toolTip() for a in second.recent_menu.actions()) == str(path)
    second.set_appearance("light")


def test_double_click_group_expands_and_click_selects(window: MainWindow, qtbot) -> None:
    path = ladder_model("resnet50.onnx")  # exporter-style scoped names: real groups
    tab = wait_open(qtbot, window.open_paths([str(path)])[0])
    layout = tab.layout_data
    ops = [b for b in layout.boxes if b.kind == "node"]
    assert ops, "the CNN opens with its operators visible"
    # Collapse everything: one box per top-level group, then expand one by double-click.
    with qtbot.waitSignal(tab.layoutChanged, timeout=30000):
        tab.collapse_all()
    groups = [b for b in tab.layout_data.boxes if b.kind == "group"]
    assert groups
    assert len([b for b in tab.layout_data.boxes if b.kind == "node"]) < len(ops)
    target = groups[0]
    tab.view.center_on_box(target.id, flash=False)
    pos = tab.view.map_box_to_view(target.id)
    with qtbot.waitSignal(tab.layoutChanged, timeout=30000):
        qtbot.mouseDClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert target.id in tab.state.groups
    assert tab.layout_data.box(target.id) is None  # now a frame, not a box
    assert any(f.id == target.id for f in tab.layout_data.groups)
    with qtbot.waitSignal(tab.layoutChanged, timeout=30000):
        tab.expand_all()
    op = next(b for b in tab.layout_data.boxes if b.kind == "node")
    tab.view.center_on_box(op.id, flash=False)
    pos = tab.view.map_box_to_view(op.id)
    with qtbot.waitSignal(tab.view.selectionChanged, timeout=5000) as sig:
        qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert sig.args[0] == [op.id]
    assert node_by_id(tab.model, op.id).op_type == op.title


def test_argv_opens_files_in_a_real_process(tmp_path: Path) -> None:
    good = save(tiny_mlp(), tmp_path / "argv.onnx")
    env = {**os.environ, "ONNXSTUDIO_QUIT_AFTER_OPEN": "1", "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-m", "onnxstudio", "--new-instance", str(good)],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"")
    result = subprocess.run([sys.executable, "-m", "onnxstudio", "--new-instance", str(bad)],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "bad.onnx: the file is empty" in result.stderr


def test_second_launch_hands_files_to_the_running_window(window: MainWindow, qtbot,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    instance = f"test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("ONNXSTUDIO_INSTANCE", instance)
    server = InstanceServer(window.open_paths, window)
    assert server.listening
    model = save(tiny_mlp(), tmp_path / "handed.onnx")
    env = {**os.environ, "ONNXSTUDIO_INSTANCE": instance, "QT_QPA_PLATFORM": "offscreen"}
    # The second launch, then what it had to load: a hand-over needs only Qt's socket
    # (it took 4 s when it loaded the whole window first).
    launch = ("import sys; from onnxstudio.cli import main; code = main(sys.argv[1:]); "
              "print(sorted(m for m in ('onnx', 'onnxruntime', 'numpy', 'PySide6.QtWidgets',"
              " 'onnxstudio.ui.main_window') if m in sys.modules)); raise SystemExit(code)")
    second = subprocess.Popen([sys.executable, "-c", launch, str(model)], cwd=REPO,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    qtbot.waitUntil(lambda: second.poll() is not None, timeout=120000)
    out, err = second.communicate()
    assert second.returncode == 0, err
    assert "running window" in err
    assert out.strip() == "[]"
    tab = wait_open(qtbot, window.current_tab())
    assert tab.path == model.absolute()
    server.close()


def test_view_menu_commands(window: MainWindow, qtbot, tmp_path: Path) -> None:
    tab = wait_open(qtbot, window.open_paths([str(save(tiny_mlp(), tmp_path / "m.onnx"))])[0])
    before = tab.view.current_scale()
    window.commands["zoom_in"].trigger()
    assert tab.view.current_scale() > before
    window.commands["fit"].trigger()
    with qtbot.waitSignal(tab.layoutChanged, timeout=30000):
        window.commands["toggle_direction"].trigger()
    assert tab.layout_data.direction == "LR"
    xs = [b.x for b in tab.layout_data.boxes if b.kind == "node"]
    assert max(xs) - min(xs) > 0  # left-to-right really spreads along x


def test_image_dropped_on_the_window_is_classified(window: MainWindow, qtbot) -> None:
    """The sample model opens, a sample digit is dropped on the window, the answer shows."""
    from onnxstudio.resources import resource

    tab = wait_open(qtbot, window.open_paths([str(sample_model_path())])[0])
    assert tab.model is not None
    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=120000):
        drop(window, [resource("sample", "digit_7.png")])
    assert window.docks["run"].isVisible()
    assert run_panel.results.top_table.item(0, 0).text().startswith("7")
    assert run_panel.error_text() == ""


def test_run_image_command_asks_for_an_image_and_classifies_it(
        window: MainWindow, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ▸ Run Image… (Ctrl+R) opens a file dialog and runs the chosen image."""
    from PySide6.QtWidgets import QFileDialog

    from onnxstudio.resources import resource

    asked: list[str] = []

    def choose(_parent, title, *_args):
        asked.append(title)
        return [str(resource("sample", "digit_7.png"))], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(choose))
    wait_open(qtbot, window.open_paths([str(sample_model_path())])[0])
    assert window.commands["run_image"].shortcut().toString() == "Ctrl+R"
    with qtbot.waitSignal(window.run_panel.runFinished, timeout=120000):
        window.commands["run_image"].trigger()
    assert asked == ["Open images"]
    assert window.docks["run"].isVisible()
    assert window.run_panel.results.top_table.item(0, 0).text().startswith("7")


def test_real_mnist_digit_photo_dropped_on_the_window(window: MainWindow, qtbot) -> None:
    model = shared_model("zoo/mnist/mnist.onnx")
    wait_open(qtbot, window.open_paths([str(model)])[0])
    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=120000):
        drop(window, [shared_model("images/digit_3.jpg")])
    assert run_panel.results.top_table.item(0, 0).text().startswith("3")


def test_expand_all_opens_local_function_calls_in_place(window: MainWindow, qtbot,
                                                        tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    from tests.builders import make_model

    swish = helper.make_function(
        "custom", "Swish", ["x"], ["y"],
        [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])],
        opset_imports=[helper.make_opsetid("", 21)])
    graph = helper.make_graph(
        [helper.make_node("Swish", ["a"], ["b"], domain="custom", name="act")], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])])
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("custom", 1)]
    path = save(make_model(graph, functions=[swish], opset_imports=opsets), tmp_path / "f.onnx")
    tab = wait_open(qtbot, window.open_paths([str(path)])[0])
    call = tab.model.graph.nodes[0]
    assert tab.layout_data.box(call.id) is not None  # a call starts collapsed, as one box
    with qtbot.waitSignal(tab.layoutChanged, timeout=30000):
        window.commands["expand"].trigger()
    assert "function" in {f.kind for f in tab.layout_data.groups}
    inner = {b.title for b in tab.layout_data.boxes if b.id.startswith(f"{call.id}/")}
    assert inner == {"Sigmoid", "Mul"}


def test_menus_offer_what_the_issue_lists(window: MainWindow) -> None:
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert list(menus) == ["File", "Edit", "View", "Model", "Run", "Help"]

    def texts(menu) -> list[str]:
        return [a.text().replace("&", "") for a in menu.actions() if a.text()]

    assert {"Open…", "Open Recent", "Export Diagram…", "Save As…", "Close", "Quit"} <= set(
        texts(menus["File"]))
    assert {"Undo", "Redo", "Apply Script…", "Edit History"} <= set(texts(menus["Edit"]))
    # Save As and Save Edits as Script are in one menu, File (issue 34)
    assert "Save Edits as Script…" in texts(menus["File"])
    assert not {"Save As…", "Save Edits as Script…"} & set(texts(menus["Edit"]))
    assert {"Zoom In", "Zoom Out", "Fit to Window", "Direction", "Theme", "Panels"} <= set(
        texts(menus["View"]))
    assert {"Model Properties", "Opsets", "Convert to Opset…"} <= set(texts(menus["Model"]))
    run = texts(menus["Run"])
    assert {"Run Image…", "Run with Random Inputs", "Benchmark", "Execution Provider"} <= set(run)
    provider_menu = next(a.menu() for a in menus["Run"].actions() if a.menu())
    assert "CPU" in texts(provider_menu)
    combo = window.run_panel.choices.provider_combo
    next(a for a in provider_menu.actions() if a.text() == "CPU").trigger()
    assert combo.currentText() == "CPUExecutionProvider"
    assert {"Keyboard Shortcuts", "About onnxstudio"} <= set(texts(menus["Help"]))


def test_menus_and_shortcuts_come_from_the_command_table(window: MainWindow) -> None:
    """Every shortcut the window had before the table still reaches its menu entry."""
    def entries(menu) -> dict[str, str]:
        out = {}
        for act in menu.actions():
            if act.menu() is not None:
                out |= entries(act.menu())
            elif not act.isSeparator():
                out[act.text().replace("&", "")] = act.shortcut().toString()
        return out

    menus = {a.text().replace("&", ""): entries(a.menu()) for a in window.menuBar().actions()}
    assert list(menus) == ["File", "Edit", "View", "Model", "Run", "Help"]
    expected = {
        ("File", "Export Diagram…"): "Ctrl+E", ("View", "Fit to Window"): "Ctrl+0",
        ("View", "Expand All Groups"): "Ctrl+Shift+E",
        ("View", "Collapse All Groups"): "Ctrl+Shift+C",
        ("View", "Show Node Names"): "Ctrl+Shift+N", ("View", "Toggle Direction"): "Ctrl+D",
        ("Model", "Model Properties"): "Ctrl+I", ("Model", "Extract Selection…"): "Ctrl+Shift+X",
        ("Model", "Find…"): "Ctrl+F", ("Run", "Run Image…"): "Ctrl+R",
        ("Run", "Run with Random Inputs"): "Ctrl+Shift+R", ("Run", "Profile Run"): "Ctrl+Shift+P",
        ("Run", "Show Tensor Values"): "Ctrl+T", ("Run", "Compare Runs"): "Ctrl+Shift+M",
        ("Help", "Keyboard Shortcuts"): "F1", ("File", "Open…"): "Ctrl+O",
    }
    assert {key: menus[key[0]].get(key[1]) for key in expected} == expected
    assert {"Top to Bottom", "Left to Right", "Light", "Dark", "Node", "Run"} <= set(menus["View"])
    assert [a.iconText() for a in window.toolbar.actions() if not a.isSeparator()] == [
        "Open", "Export", "Fit", "Zoom +", "Zoom −", "Expand all", "Collapse all", "TB ⇄ LR",
        "Find", "Run image"]


def test_f1_lists_undo_redo_and_save_as(window: MainWindow, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text: shown.append(text))
    window.commands["shortcuts"].trigger()
    [text] = shown
    for command in ("Undo", "Redo", "Save As", "Edit Selection"):
        assert f"<td>{command}</td>" in text
    assert "Ctrl+Shift+Z  Ctrl+Y" in text


def test_view_toggles_the_minimap_and_edge_labels(window: MainWindow, qtbot,
                                                   tmp_path: Path) -> None:
    from tests.test_window_readable import _long_chain

    tab = wait_open(qtbot, window.open_paths([str(save(_long_chain(200),
                                                       tmp_path / "long.onnx"))])[0])
    qtbot.wait(50)
    assert tab.view.minimap.isVisible() and tab.view.show_edge_labels
    window.commands["minimap"].trigger()
    window.commands["edge_labels"].trigger()
    assert not tab.view.minimap.isVisible() and not tab.view.show_edge_labels
    other = wait_open(qtbot, window.open_paths([str(save(_long_chain(201),
                                                         tmp_path / "other.onnx"))])[0])
    assert not other.view.show_edge_labels and not other.view.minimap.allowed
    restarted = MainWindow()  # remembered
    qtbot.addWidget(restarted)
    assert not restarted.commands["minimap"].isChecked()
    assert not restarted.commands["edge_labels"].isChecked()


def test_closing_every_tab_leaves_nothing_of_the_model(window: MainWindow, qtbot) -> None:
    wait_open(qtbot, window.open_paths([str(sample_model_path())])[0])
    assert window.statusBar().currentMessage().startswith("Opened")
    window.close_current_tab()
    assert window.statusBar().currentMessage() == ""
    assert window.run_panel.model_path() is None
    for command in ("between", "extract", "split", "profile", "compare", "capture_all",
                    "export", "fit"):
        assert not window.commands[command].isEnabled(), command


def test_a_model_and_an_image_dropped_together_run_the_image(window: MainWindow,
                                                             qtbot) -> None:
    from onnxstudio.resources import resource

    run_panel = window.run_panel
    with qtbot.waitSignal(run_panel.runFinished, timeout=120000):
        drop(window, [sample_model_path(), resource("sample", "digit_7.png")])
    assert run_panel.results.top_table.item(0, 0).text().startswith("7")
    assert run_panel.error_text() == ""


def test_a_dropped_folder_goes_to_the_run_panel(window: MainWindow, qtbot,
                                                tmp_path: Path) -> None:
    import shutil

    from onnxstudio.resources import resource

    wait_open(qtbot, window.open_paths([str(sample_model_path())])[0])
    folder = tmp_path / "digits"
    folder.mkdir()
    shutil.copy(resource("sample", "digit_7.png"), folder / "a.png")
    with qtbot.waitSignal(window.run_panel.folderFinished, timeout=120000):
        drop(window, [folder])
    assert window.docks["run"].isVisible()
    assert len(window.run_panel.results.folder_view.rows()) == 1
