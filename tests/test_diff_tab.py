"""The diff tab driven as a user drives it: File → Diff With…, Alt+drop, the changes
list, synchronised selection, the merged canvas, the optimised graph, export colours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from onnxstudio.export.options import ExportOptions
from onnxstudio.render.overlay import DIFF_FILLS
from onnxstudio.ui import diffing
from onnxstudio.ui.dialogs.export_dialog import snapshot_view, start_export
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.main_window import MainWindow
from tests import diff_edits
from tests.builders import relu_chain, save, tiny_mlp
from tests.conftest import opened_tab, shared_model, shown_window
from tests.drops import drag_enter

MATCHED, CHANGED, ADDED, REMOVED = DIFF_FILLS


@pytest.fixture
def window(qtbot) -> MainWindow:
    return shown_window(qtbot)


def wait_diff(qtbot, tab: DiffTab) -> DiffTab:
    qtbot.waitUntil(lambda: tab.error is not None or (
        tab.result is not None and all(t.layout_data is not None and not t.busy
                                       for t in tab.tabs())), timeout=60000)
    assert tab.error is None
    # the changes list fills a turn after its sides are idle (ChangesList.defer_while)
    qtbot.waitUntil(lambda: tab.changes.model.rowCount() == len(tab.changes.rows()),
                    timeout=30000)
    return tab


@pytest.fixture
def edited_pair(tmp_path: Path) -> tuple[Path, Path]:
    """tiny_mlp and a renamed copy with Softmax's axis changed, the Relu removed and a
    Sigmoid inserted before the Softmax."""
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    diff_edits.remove_node(edited, "Relu")
    diff_edits.insert_after(edited, "MatMul", "Sigmoid", nth=1)
    diff_edits.rename_everything(edited)
    return save(tiny_mlp(), tmp_path / "a.onnx"), save(edited, tmp_path / "b.onnx")


def test_diff_tab_colours_lists_and_jumps(window, qtbot, edited_pair) -> None:
    a, b = edited_pair
    [opened] = window.open_paths([str(a)])
    qtbot.waitUntil(lambda: opened.model is not None and not opened.busy, timeout=60000)
    assert window.commands["diff"].isEnabled()
    tab = wait_diff(qtbot, diffing.open_diff(window, a, b))
    assert window.tabs.currentWidget() is tab
    shown = re.sub(r"<[^>]+>|&nbsp;|■", " ", tab.summary.text())
    assert re.sub(r"\s+", " ", shown).strip().startswith(
        "3 matched 1 changed 1 added 1 removed")
    assert tab.summary.toolTip().startswith("80.0% of the nodes paired")
    # one key in the header, none over the two narrow canvases
    assert not tab.side_a.view.legend.isVisible() and not tab.side_b.view.legend.isVisible()
    listed = [(e.status, e.op_type) for e in tab.changes.rows()]
    assert listed == [("removed", "Relu"), ("changed", "Softmax"), ("added", "Sigmoid")]

    def node_id(side, op):
        return next(n.id for n in side.model.graph.nodes if n.op_type == op)

    assert tab.side_a.view.overlay().fill(node_id(tab.side_a, "Softmax")) == CHANGED
    assert tab.side_a.view.overlay().fill(node_id(tab.side_a, "Relu")) == REMOVED
    assert tab.side_b.view.overlay().fill(node_id(tab.side_b, "Sigmoid")) == ADDED
    assert tab.side_b.view.overlay().fill(node_id(tab.side_b, "Add")) == MATCHED

    # a click on the Softmax row selects it on both sides and shows both versions
    tab.changes.tree.clicked.emit(tab.changes.model.index(1, 0))
    assert tab.side_a.view.selected_ids() == [node_id(tab.side_a, "Softmax")]
    assert tab.side_b.view.selected_ids() == [node_id(tab.side_b, "Softmax")]
    page = tab.details.toPlainText().replace("\u200b", "")  # break points in names
    assert "axis" in page and "-1" in page and "op_4" in page
    assert tab.details.entry is tab.changes.rows()[1]

    # filtering narrows the list; matched rows on request
    tab.changes.query.setText("sigm")
    assert [e.op_type for e in tab.changes.rows()] == ["Sigmoid"]
    tab.changes.query.clear()
    tab.changes.boxes["matched"].setChecked(True)
    assert len(tab.changes.rows()) == 6


def test_selection_follows_across_and_the_window_works_on_the_clicked_side(
        window, qtbot, edited_pair) -> None:
    a, b = edited_pair
    tab = wait_diff(qtbot, diffing.open_diff(window, a, b))
    add_a = next(n.id for n in tab.side_a.model.graph.nodes if n.op_type == "Add")
    add_b = next(n.id for n in tab.side_b.model.graph.nodes if n.op_type == "Add")
    tab.side_b.view.set_selection([add_b])
    assert tab.side_a.view.selected_ids() == [add_a]
    assert window.current_tab() is tab.side_b  # export, inspector, run act on B now
    assert tab.details.entry.status == "matched"
    tab.sync_box.setChecked(False)
    tab.side_a.view.set_selection([])
    assert tab.side_b.view.selected_ids() == [add_b]


def test_merged_canvas_shows_both_sides_in_one(window, qtbot, edited_pair) -> None:
    a, b = edited_pair
    tab = wait_diff(qtbot, diffing.open_diff(window, a, b))
    tab.mode_merged.click()
    qtbot.waitUntil(lambda: tab.merged is not None and tab.merged.layout_data is not None,
                    timeout=60000)
    merged = tab.merged
    assert window.current_tab() is merged
    titles = {box.id: box.title for box in merged.layout_data.boxes}
    assert sorted(t for t in titles.values() if t in ("Relu", "Sigmoid")) == ["Relu", "Sigmoid"]
    overlay = merged.view.overlay()
    sigmoid = next(i for i, t in titles.items() if t == "Sigmoid")
    relu = next(i for i, t in titles.items() if t == "Relu")
    assert (overlay.fill(sigmoid), overlay.fill(relu)) == (ADDED, REMOVED)
    merged.view.set_selection([sigmoid])
    assert tab.details.entry.status == "added"
    tab.mode_sides.click()
    assert tab.canvas.currentWidget() is tab.sides


def test_export_keeps_the_diff_colours(window, qtbot, edited_pair, tmp_path) -> None:
    a, b = edited_pair
    wait_diff(qtbot, diffing.open_diff(window, a, b))
    side = window.current_tab()  # side A until another side is clicked
    snap = snapshot_view(side.view)
    assert snap.overlay is not None and snap.overlay.kind == "diff"
    target = tmp_path / "diff.svg"
    flow = start_export(window, side.model, side.layout_data, snap, path=target,
                        options=ExportOptions(overlay=snap.overlay))
    qtbot.waitUntil(lambda: flow.result is not None or flow.error is not None, timeout=60000)
    assert flow.error is None
    svg = target.read_text()
    assert CHANGED in svg and REMOVED in svg and ADDED not in svg  # A has no added node


def test_alt_drop_on_a_tab_opens_a_diff(window, qtbot, edited_pair) -> None:
    a, b = edited_pair
    [opened] = window.open_paths([str(a)])
    qtbot.waitUntil(lambda: opened.model is not None and not opened.busy, timeout=60000)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(b))])
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.AltModifier)
    centre = window.rect().center()
    QApplication.sendEvent(window, drag_enter(centre, mime, Qt.KeyboardModifier.AltModifier))
    QApplication.sendEvent(window, QDropEvent(QPointF(centre), *args))
    tab = window.tabs.currentWidget()
    assert isinstance(tab, DiffTab) and (tab.path_a, tab.path_b) == (a, b)
    wait_diff(qtbot, tab)
    assert window.tabs.count() == 2


def _no_session_here(monkeypatch) -> None:
    """onnxruntime holds the GIL while it creates a session (onnxruntime#27063): the
    window's process must never create one for the optimised graph."""
    import onnxruntime

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an InferenceSession was created in the window's process")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)


def test_show_optimised_graph_opens_a_diff_and_cleans_up(window, qtbot, tmp_path,
                                                         monkeypatch) -> None:
    source = diff_edits.conv_bn_relu(tmp_path / "net.onnx")
    [opened] = window.open_paths([str(source)])
    qtbot.waitUntil(lambda: opened.model is not None and not opened.busy, timeout=60000)
    window.run_panel.choices.optimization_combo.setCurrentText("basic")
    _no_session_here(monkeypatch)
    window.commands["optimised"].trigger()
    # the handler returned at once: the child works, the window waits for nothing
    assert window.optimiser.busy and window.tabs.count() == 1
    assert not window.commands["optimised"].isEnabled()
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), DiffTab), timeout=60000)
    tab = wait_diff(qtbot, window.tabs.currentWidget())
    assert "as onnxruntime runs it (basic)" in window.tabs.tabText(window.tabs.currentIndex())
    assert [e.op_type for e in tab.changes.rows()] == ["Conv", "BatchNormalization"]
    folded = tab.changes.model.index(1, 2).data().splitlines()[-1]
    assert folded == "only in A; its result now comes from Conv conv"
    tab.jump_to(tab.changes.rows()[1])
    assert "Its result now comes from Conv conv in B" in tab.details.toPlainText()
    optimised = tab.path_b
    assert optimised.exists() and optimised.parent != source.parent
    window.close_tab(window.tabs.currentIndex())
    assert not optimised.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.onnx"]


def test_an_optimised_graph_onnxruntime_refuses_is_one_line(window, qtbot, tmp_path,
                                                             monkeypatch) -> None:
    from tests.test_optimised_graph import refused_model

    source = refused_model(tmp_path)
    opened_tab(qtbot, window, source)
    _no_session_here(monkeypatch)
    window.commands["optimised"].trigger()
    qtbot.waitUntil(lambda: not window.optimiser.busy, timeout=60000)
    message = window.statusBar().currentMessage()
    assert message.startswith("bad.onnx: onnxruntime cannot load this model") \
        and "\n" not in message
    assert window.tabs.count() == 1  # no diff tab, and the command is ready again
    assert window.commands["optimised"].isEnabled()


def test_real_model_edits_in_the_window(window, qtbot, tmp_path) -> None:
    source = shared_model("zoo/style_transfer/fns-candy.onnx")
    model = diff_edits.load(source)
    diff_edits.perturb_weight(model, "Conv")
    tab = wait_diff(qtbot, diffing.open_diff(
        window, source, diff_edits.save(model, tmp_path / "candy.onnx")))
    [entry] = tab.changes.rows()
    tab.jump_to(entry)
    text = tab.details.toPlainText()
    assert "max |a − b|" in text and "0.5" in text and "hash" in text


def test_diff_panes_open_fitted_without_a_minimap_and_details_read(window, qtbot,
                                                                   tmp_path) -> None:
    """Issue 34: each side of a long model opens whole (it opened cut, at its inputs),
    no minimap covers the narrow panes, and a weight change leads the pair details,
    whose lines break between words."""
    from PySide6.QtGui import QTextOption

    from tests.test_window_readable import _long_chain

    a = save(_long_chain(60), tmp_path / "a.onnx")
    b = save(_long_chain(61), tmp_path / "b.onnx")
    tab = wait_diff(qtbot, diffing.open_diff(window, a, b))
    qtbot.wait(50)
    for side in tab.tabs():
        assert set(side.view.visible_box_ids()) == {x.id for x in side.layout_data.boxes}
    tab.side_a.view.zoom_in()
    tab.side_a.view.zoom_in()
    qtbot.wait(50)
    assert not tab.side_a.view.minimap.isVisible()
    assert tab.details.wordWrapMode() == QTextOption.WrapMode.WordWrap


def test_pair_details_put_weight_differences_first(tmp_path) -> None:
    from onnxstudio.model import load_model
    from onnxstudio.model.diff import diff_models
    from onnxstudio.ui.diff.pair_details import pair_html

    edited = tiny_mlp()
    diff_edits.perturb_weight(edited, "MatMul")
    result = diff_models(load_model(save(tiny_mlp(), tmp_path / "a.onnx")),
                         load_model(save(edited, tmp_path / "b.onnx")))
    [entry] = [e for e in result.nodes if e.status == "changed"]
    page = re.sub(r"<[^>]+>", " ", pair_html(entry))
    assert page.index("weight W2") < page.index("since version")


def test_a_long_changes_list_is_read_only_for_the_rows_shown(monkeypatch, qtbot,
                                                             tmp_path: Path) -> None:
    """A thousand rows built as items froze the window (BERT-12's optimised graph), and
    in batches of 200 a turn they took BERT-96's 49 turns, each repainting the list: the
    list now holds every row at once and reads only those on screen. A new result lists
    from the next turn on (the diff's canvases land this turn); the newest filter wins."""
    from onnxstudio.model.diff import diff_models
    from onnxstudio.model.open import load_model
    from onnxstudio.ui.diff import changes_list

    read: set[int] = set()

    class Noting(changes_list.ChangeRows):
        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            read.add(index.row())
            return super().data(index, role)

    monkeypatch.setattr(changes_list, "ChangeRows", Noting)
    count = 2000
    path = save(relu_chain(count), tmp_path / "chain.onnx")
    model = load_model(path, shape_inference=False)
    changes = changes_list.ChangesList()
    qtbot.addWidget(changes)
    changes.resize(300, 400)
    changes.show()
    changes.set_result(diff_models(model, model))
    assert changes.model.rowCount() == 0  # a new result: nothing listed this turn
    changes.boxes["matched"].setChecked(True)  # identical: every row is matched
    assert len(changes.rows()) == changes.model.rowCount() == count
    read.clear()
    changes.tree.viewport().repaint()
    changes.tree.scrollToBottom()
    QApplication.processEvents()
    changes.tree.viewport().repaint()
    assert 0 < len(read) < 100 and count - 1 in read  # the rows shown, top and bottom
    last = changes.model.index(count - 1, 1)
    assert last.data() == "Relu" and last.data(Qt.ItemDataRole.UserRole) is changes.rows()[-1]
    changes.set_result(diff_models(model, model))
    changes.query.setText("Relu_7")  # a refill drops the older fill still to come
    qtbot.wait(100)
    assert [changes.model.index(i, 2).data().splitlines()[0]
            for i in range(changes.model.rowCount())] == [
        e.a.label for e in changes.rows()] and len(changes.rows()) == 111
