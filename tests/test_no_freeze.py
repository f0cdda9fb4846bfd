"""No action freezes the window (issue 34): work the stall tracer found on the GUI
thread runs on a worker, and what the user sees is the same."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QSettings

from onnxstudio.ui import settings
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from onnxstudio.ui.tasks import TaskRunner


class _Recording(QSettings):
    """QSettings noting the thread of every write."""

    writers: ClassVar[list[threading.Thread]] = []

    def setValue(self, key: str, value: object) -> None:
        _Recording.writers.append(threading.current_thread())
        super().setValue(key, value)


def test_recent_files_are_written_off_the_gui_thread(monkeypatch, qapp) -> None:
    """A QSettings write syncs its file (a lock file, two fdatasyncs): 250 ms of the first
    open's stall on a busy disk. The window's thread only queues it."""
    monkeypatch.setattr(settings, "QSettings", _Recording)
    _Recording.writers = []
    assert settings.add_recent_file("/models/a.onnx") == ["/models/a.onnx"]
    assert TaskRunner.wait_all()
    assert _Recording.writers and threading.main_thread() not in _Recording.writers
    fresh = QSettings(str(Path(os.environ[settings.DIR_ENV]) / "onnxstudio.ini"),
                      QSettings.Format.IniFormat)
    assert fresh.value("recent_files") in ("/models/a.onnx", ["/models/a.onnx"])


def test_a_value_stored_is_read_back_at_once(qapp) -> None:
    """Read before the worker wrote it, a stored value is there all the same."""
    settings.add_recent_file("/models/a.onnx")
    settings.store({"hide_nodes": "constant"})
    assert settings.add_recent_file("/models/b.onnx") == ["/models/b.onnx", "/models/a.onnx"]
    assert settings.recent_files() == ["/models/b.onnx", "/models/a.onnx"]
    assert settings.app_settings().value("hide_nodes") == "constant"


def test_opening_a_model_lists_it_in_recent_files_without_writing_on_the_gui_thread(
        monkeypatch, qtbot) -> None:
    monkeypatch.setattr(settings, "QSettings", _Recording)
    _Recording.writers = []
    window = MainWindow()
    qtbot.addWidget(window)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.model is not None and not tab.busy, timeout=30000)
    qtbot.waitUntil(lambda: window.recent_menu.actions() != [], timeout=5000)
    assert [a.text() for a in window.recent_menu.actions()] == ["digits_cnn.onnx"]
    assert TaskRunner.wait_all()
    assert _Recording.writers and threading.main_thread() not in _Recording.writers
    assert settings.recent_files() == [str(sample_model_path())]
    window.shutdown()


def _threads_calling(monkeypatch, module: object, name: str) -> list[threading.Thread]:
    """Patch ``module.name`` to note the thread of each call."""
    original = getattr(module, name)
    threads: list[threading.Thread] = []

    def noted(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, noted)
    return threads


def test_a_diff_tab_colours_its_sides_off_the_gui_thread(monkeypatch, qtbot,
                                                          tmp_path: Path) -> None:
    """The diff's colours are worked out and folded into each side's layout on workers:
    on the GUI thread they took 25-50 ms of BERT-96's diff, in one turn."""
    from onnxstudio.render.overlay import DIFF_FILLS
    from onnxstudio.ui import diffing
    from onnxstudio.ui.canvas import drawing, model_tab
    from tests import diff_edits
    from tests.builders import save, tiny_mlp
    from tests.conftest import shown_window

    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    a, b = save(tiny_mlp(), tmp_path / "a.onnx"), save(edited, tmp_path / "b.onnx")
    on_landing = _threads_calling(monkeypatch, model_tab, "build_overlay")
    in_drawing = _threads_calling(monkeypatch, drawing, "build_overlay")
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        side.layout_data is not None and not side.busy for side in tab.tabs()), timeout=60000)
    softmax = next(n.id for n in tab.side_b.model.graph.nodes if n.op_type == "Softmax")
    assert tab.side_b.view.overlay().fill(softmax) == DIFF_FILLS[1]  # changed
    assert on_landing == [] and len(in_drawing) == 2
    assert threading.main_thread() not in in_drawing


def test_a_diff_tab_counts_and_lists_its_changes_off_the_gui_thread(monkeypatch, qtbot,
                                                                    tmp_path: Path) -> None:
    """The header's counts, the paired share and the changes list's rows are each a pass
    over every node: on the GUI thread they froze dag100k's diff as it landed."""
    import re

    from onnxstudio.model.diff import ModelDiff
    from onnxstudio.ui import diffing
    from tests import diff_edits
    from tests.builders import save, tiny_mlp
    from tests.conftest import shown_window

    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    diff_edits.remove_node(edited, "Relu")
    a, b = save(tiny_mlp(), tmp_path / "a.onnx"), save(edited, tmp_path / "b.onnx")
    counted = _threads_calling(monkeypatch, ModelDiff, "summary")
    paired = _threads_calling(monkeypatch, ModelDiff, "match_ratio")
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        side.layout_data is not None and not side.busy for side in tab.tabs()), timeout=60000)
    qtbot.waitUntil(lambda: tab.changes.model.rowCount() == 2)
    assert sorted(e.op_type for e in tab.changes.rows()) == ["Relu", "Softmax"]
    shown = " ".join(re.sub(r"<[^>]+>|&nbsp;|■", " ", tab.summary.text()).split())
    assert "1 changed" in shown and "1 removed" in shown
    assert tab.summary.toolTip().endswith(" s") and "of the nodes paired" in \
        tab.summary.toolTip()
    assert counted and paired
    assert threading.main_thread() not in counted + paired


def test_diff_sides_follow_each_other_looking_up_only_the_nearest_boxes(qtbot,
                                                                        tmp_path: Path) -> None:
    """Panning one side anchors the other on the box nearest the centre: the nearest
    ones are found by numpy, not by looking up every box drawn (20-40 ms of BERT-96's
    diff at every resize)."""
    from onnxstudio.ui import diffing
    from tests.builders import relu_chain, save
    from tests.conftest import shown_window

    path = save(relu_chain(300), tmp_path / "chain.onnx")
    window = shown_window(qtbot)
    tab = diffing.open_diff(window, path, path)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        side.layout_data is not None and not side.busy for side in tab.tabs()), timeout=60000)
    a, b = tab.side_a.view, tab.side_b.view
    asked: list[str] = []
    to_b = tab.sync.maps[id(a)][1]
    tab.sync.maps[id(a)] = (b, lambda box_id: asked.append(box_id) or to_b(box_id))
    a.zoom_by(4.0)
    a.centerOn(*a.index().centre("n150"))
    assert len(a.visible_box_ids()) > 3
    asked.clear()
    tab.sync.follow(a)
    assert asked == ["n150"]  # the nearest, with its counterpart: the only one asked
    shown = b.visible_box_ids()
    assert "n150" in shown and len(shown) < 300


def test_an_editor_opened_in_the_node_panel_parses_the_model_for_editing_on_a_worker(
        monkeypatch, qtbot) -> None:
    """The first edit needs the model's proto (parsed again: 93 ms of BERT-96 on the GUI
    thread, 163 of dag100k). A double-click that opens an editor starts that parse on a
    worker while the user types; the edit then finds it done."""
    from onnxstudio.ui.edit import controller
    from tests.conftest import shown_window

    parses = _threads_calling(monkeypatch, controller.EditSession, "open")
    window = shown_window(qtbot)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=30000)
    conv = next(n for n in tab.model.graph.nodes if n.op_type == "Conv")
    tab.view.set_selection([conv.id])
    tree = window.inspector.node.tree
    qtbot.waitUntil(lambda: tree.find_row("strides", "Attributes") is not None, timeout=5000)
    item = tree.find_row("strides", "Attributes")
    tree.itemDoubleClicked.emit(item, 1)  # the editor opens...
    tree._start_edit(item, 1)
    assert TaskRunner.wait_all()
    assert len(parses) == 1 and parses[0] is not threading.main_thread()
    item.setText(1, "[2, 2]")  # ...and the user commits a value
    edits = window.edits.controllers[tab]
    qtbot.waitUntil(lambda: not edits.busy and not tab.busy and tab.model is not None
                    and next(n for n in tab.model.graph.nodes if n.id == conv.id)
                    .attribute("strides").value == [2, 2], timeout=30000)
    assert len(parses) == 1  # not parsed again at the edit
    assert window.tabs.tabText(window.tabs.indexOf(tab)).endswith("●")
    edits.stack.setClean()  # closing asks nothing


def test_the_split_plan_is_coloured_on_the_canvas_from_the_planners_worker(
        monkeypatch, qtbot, tmp_path: Path) -> None:
    """The stages' colours are folded into the canvas' layout beside the plan, on the
    worker: on the GUI thread they took dag100k's plan 160-180 ms."""
    from onnxstudio.ui import model_commands
    from onnxstudio.ui.canvas import model_tab
    from tests.builders import save
    from tests.conftest import shown_window
    from tests.test_split import skip_mlp

    on_gui = _threads_calling(monkeypatch, model_tab, "build_overlay")
    planned = _threads_calling(monkeypatch, model_commands, "build_overlay")
    window = shown_window(qtbot)
    (tab,) = window.open_paths([str(save(skip_mlp(), tmp_path / "skip.onnx"))])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=30000)
    dialog = window.split_into_stages()
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=30000)
    overlay = tab.view.overlay()
    assert overlay is not None and {b for b in overlay.badges.values()} >= {"S1", "S4"}
    assert on_gui == [] and planned and threading.main_thread() not in planned
    dialog.close()
    assert tab.view.overlay() is None
    assert TaskRunner.wait_all()


def test_compare_names_its_nodes_on_the_worker(monkeypatch, qtbot) -> None:
    """The table's node names (a pass over every node) are made by the compare task."""
    from onnxstudio.runner.compare import parse_config
    from onnxstudio.ui.insight.compare_options import CompareOptions
    from tests.conftest import shown_window

    window = shown_window(qtbot)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=30000)
    builders: list[threading.Thread] = []
    memo = tab.model.memo

    def noted(key: str, compute):  # type: ignore[no-untyped-def]
        if key == "node_names" and key not in tab.model.derived:
            builders.append(threading.current_thread())
        return memo(key, compute)

    monkeypatch.setattr(tab.model, "memo", noted)
    insight = window.insight
    cpu = parse_config("ort:cpu:disabled")
    insight.start_compare(CompareOptions(cpu, cpu, 1e-3))
    qtbot.waitUntil(lambda: insight.compare_panel.result() is not None, timeout=60000)
    view = insight.compare_panel.intermediates_view
    assert view.source.rowCount() > 0
    assert len(builders) == 1 and builders[0] is not threading.main_thread()
    assert TaskRunner.wait_all()


def test_an_edited_model_gets_its_panels_dimension_names_on_the_worker(monkeypatch,
                                                                       qtbot) -> None:
    """The Model panel's dimension abbreviations (a pass over every node) come with the
    rebuilt model: at the landing they took dag100k's edit 40 ms of the GUI thread."""
    from onnxstudio.ui.edit import controller
    from tests.conftest import shown_window

    made = _threads_calling(monkeypatch, controller, "model_dim_abbreviations")
    window = shown_window(qtbot)
    (tab,) = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.layout_data is not None and not tab.busy, timeout=30000)
    before = tab.model
    window.edits.apply([{"op": "set_metadata", "key": "k", "value": "v"}])
    edits = window.edits.controllers[tab]
    qtbot.waitUntil(lambda: tab.model is not before and not edits.busy and not tab.busy,
                    timeout=30000)
    assert made and threading.main_thread() not in made
    assert "types:dim_abbreviations" in tab.model.derived
    edits.stack.setClean()  # closing asks nothing


def test_two_tabs_landing_together_paint_in_turns_of_their_own(qtbot, tmp_path: Path) -> None:
    """A diff's two sides drawn at once painted both in one turn (BERT-96's optimised
    graph: 75 ms of GUI thread): the second waits for a turn after the first."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QHBoxLayout, QWidget

    from onnxstudio.ui.canvas.model_tab import ModelTab
    from tests.builders import relu_chain, save

    path = save(relu_chain(200), tmp_path / "chain.onnx")
    holder = QWidget()
    qtbot.addWidget(holder)
    tabs = [ModelTab(path), ModelTab(path)]
    row = QHBoxLayout(holder)
    for tab in tabs:
        row.addWidget(tab)
    holder.resize(900, 600)
    holder.show()
    turns = [0]  # a 0 ms timer: one tick per pass of the event loop
    ticker = QTimer(holder)
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    first: dict[int, int] = {}  # tab index -> the turn of its first paint with the graph

    viewports = [tab.view.viewport() for tab in tabs]

    class FirstPaint(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            for i, (tab, viewport) in enumerate(zip(tabs, viewports, strict=True)):
                if watched is viewport and event.type() == QEvent.Type.Paint \
                        and tab.layout_data is not None:
                    first.setdefault(i, turns[0])
            return False

    spy = FirstPaint()
    for tab, viewport in zip(tabs, viewports, strict=True):
        viewport.installEventFilter(spy)
        tab.start()
    assert TaskRunner.wait_all()  # both drawn on workers: their landings queued together
    ticker.start()
    qtbot.waitUntil(lambda: all(t.layout_data is not None and not t.busy for t in tabs),
                    timeout=60000)
    ticker.stop()
    for tab, viewport in zip(tabs, viewports, strict=True):
        viewport.removeEventFilter(spy)
        tab.shutdown()
    assert sorted(first) == [0, 1] and first[0] != first[1]
