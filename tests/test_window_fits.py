"""The window never gets in the way (issue 34): it never widens by itself, and what a
panel shows fits the panel."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from onnxstudio.ui import diffing
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests import diff_edits
from tests.builders import bert_like, save, tiny_mlp
from tests.conftest import opened_tab, shown_window


@pytest.fixture
def window(qtbot) -> MainWindow:
    yield shown_window(qtbot)
    TaskRunner.wait_all()


def test_diff_find_and_every_dock_keep_the_window_at_1280(window: MainWindow, qtbot,
                                                           tmp_path: Path) -> None:
    """A diff of two long-named files, then Find and every run dock, at 1280x800: the
    window stays 1280 wide (it had grown to 1487) and the Run panel's controls are whole."""
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    a = save(tiny_mlp(), tmp_path / "a_classifier_exported_from_the_training_run.onnx")
    b = save(edited, tmp_path / "b_classifier_exported_from_the_training_run.onnx")
    opened_tab(qtbot, window, a)
    tab = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        t.layout_data is not None and not t.busy for t in tab.tabs()), timeout=60000)
    window.find_in_model()
    for key in (*window.panels.keys("first_use"), "history", "opsets", "run"):
        window.show_panel(key)
    qtbot.wait(100)
    assert window.minimumSizeHint().width() <= 1280
    assert window.width() == 1280
    summary = tab.summary  # the counts wrap in the narrow header, none cut at its edge
    assert summary.wordWrap() and summary.height() >= summary.heightForWidth(summary.width())
    scroll = window.run_panel.scroll_area
    assert scroll.viewport().width() >= scroll.widget().minimumSizeHint().width()
    button = window.run_panel.controls.bench_button  # the row's last control, read whole
    right = button.mapTo(scroll.viewport(), button.rect().topRight()).x()
    assert right < scroll.viewport().width()


def test_the_run_follows_its_tab(window: MainWindow, qtbot, tmp_path: Path) -> None:
    """Run a photo on model A, switch to model B and back: A's answer is shown again and
    Profile uses the photo, not random inputs."""
    from onnxstudio.ui.main_window import sample_model_path
    from tests.conftest import REPO

    digit = REPO / "resources" / "sample" / "digit_7.png"
    first = opened_tab(qtbot, window, sample_model_path())
    run = window.run_panel
    assert run.open_images([digit])
    qtbot.waitUntil(lambda: run.has_run() and not run.controller.busy, timeout=60000)
    answer = run.results.outcomes()
    opened_tab(qtbot, window, save(tiny_mlp(), tmp_path / "other.onnx"))
    assert not run.has_run() and run.controls.status_label.text() == "Ready"
    window.tabs.setCurrentWidget(first)
    assert run.has_run() and run.results.outcomes() == answer
    assert run.controls.status_label.text() != "Ready"
    request = run.inspection_request()
    assert not request.random and [s.name for s in request.images] == ["digit_7.png"]
    window.insight.start_profile()
    assert "the last input" in window.insight.profile_panel.status_text()
    qtbot.waitUntil(lambda: not window.insight._profiler.busy, timeout=60000)


def test_dark_theme_draws_no_white_line_and_visible_check_boxes(window: MainWindow,
                                                                 qtbot) -> None:
    from PySide6.QtGui import QPalette

    window.set_appearance("dark")
    try:
        window.find_in_model()
        qtbot.wait(50)
        assert window.tabs.palette().color(QPalette.ColorRole.Light).lightness() < 100
        box = window.inspector.search.case_box
        image = box.grab().toImage()
        indicator = [image.pixelColor(x, y).lightness() for x in range(min(16, image.width()))
                     for y in range(image.height())]
        window_lightness = box.palette().color(QPalette.ColorRole.Window).lightness()
        assert max(indicator) > window_lightness + 60  # its outline stands out
    finally:
        window.set_appearance("light")


def test_node_names_above_narrow_boxes_start_past_the_arrows_entering_them(
        window: MainWindow, qtbot) -> None:
    """View ▸ Show Node Names on the sample CNN: a name written above a box with no room
    inside (Relu, MaxPool) was written from the box's left edge, and the arrow entering
    the box's top ran through the text ("/features/re|lu1/Relu"). Each name now starts
    past the arrows entering its box, and the edge labels stay clear of it."""
    from onnxstudio.render import text as tx
    from onnxstudio.ui.main_window import sample_model_path
    from tests.render_support import RecordingSurface

    tab = opened_tab(qtbot, window, sample_model_path())
    window.commands["names"].trigger()
    painter = tab.view.painter()
    assert painter is not None and tab.view.paint_state().show_names
    layout = painter.layout
    boxes = {b.id: b for b in layout.boxes}
    rec = RecordingSurface()
    painter.paint(rec, None, 1.0, tab.view.paint_state())
    written = {args[2]: (args[0], args[1]) for name, args in rec.calls if name == "text"}
    above = [b for b in layout.boxes if b.kind == "node" and b.subtitle
             and written.get(b.subtitle, (0.0, 0.0))[1] < b.y]
    assert len(above) >= 4  # the Relu and MaxPool boxes
    crossed = []
    for b in above:
        x, _base = written[b.subtitle]
        width = tx.text_width(b.subtitle, tx.SUBTITLE_FONT)
        for e in layout.edges:
            tip_x, tip_y = (e.points or painter._centre_line(e))[-1]
            if boxes.get(e.target) is b and abs(tip_y - b.y) < 2 and x - 2 < tip_x < x + width:
                crossed.append(b.subtitle)
    assert not crossed


def test_the_diff_changes_list_fits_its_width_at_1280(window: MainWindow, qtbot,
                                                      tmp_path: Path) -> None:
    """A diff tab at 1280x800: the changes list is ~220 px wide. Its columns (mark,
    Operator, A, B, What changed) ran 600 px, so the first names were cut at the edge and
    what changed was off-screen. Now every column ends inside the list, each row reads
    the node's name over what changed, and a long name is elided, not cut."""
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    a = save(tiny_mlp(), tmp_path / "a_classifier_exported_from_the_training_run.onnx")
    b = save(edited, tmp_path / "b_classifier_exported_from_the_training_run.onnx")
    tab = diffing.open_diff(window, a, b)
    tree = tab.changes.tree
    qtbot.waitUntil(lambda: tab.result is not None and tab.changes.model.rowCount() > 0,
                    timeout=60000)
    qtbot.wait(50)
    assert window.width() == 1280 and tree.viewport().width() < 400
    header = tree.horizontalHeader()
    columns = tab.changes.model.columnCount()
    last = max(range(columns), key=header.sectionPosition)
    assert header.sectionPosition(last) + header.sectionSize(last) <= tree.viewport().width()
    assert not tree.horizontalScrollBar().isVisible()
    item = tab.changes.model.index(0, columns - 1)
    entry = tab.changes.rows()[0]
    name, what = item.data().splitlines()
    assert name == entry.a.label and what == "attribute axis"
    rect = tree.visualRect(item)
    assert rect.height() >= 2 * tree.fontMetrics().height()  # both lines shown
    assert header.sectionSize(1) >= tree.fontMetrics().horizontalAdvance(entry.op_type)


def test_a_photo_run_at_1280_keeps_numbers_whole_and_bars_in_line(
        window: MainWindow, qtbot) -> None:
    """SqueezeNet on a photo at 1280x800: the Run panel's "Fed" line wrapped inside a
    number ("range [-119." / "7, 94.06]", "116." / "8") at the break points put after
    every "."; and each top-k bar, capped at 18 px, sat at its cell's top, its
    percentage above the row's label and score. Numbers now stay whole and the bar's
    middle is the row's."""
    import re

    from onnxstudio.ui.widgets.wrapping import plain
    from tests.conftest import shared_model

    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    photo = shared_model("images/chelsea.png")
    opened_tab(qtbot, window, model)
    run = window.run_panel
    window.run_images([str(photo)])
    qtbot.waitUntil(lambda: run.has_run() and not run.controller.busy, timeout=60000)
    fed = run.results.fed_label.text()
    assert re.search(r"\d\.\d", plain(fed))  # decimals shown (the caffe mean, the range)
    assert not re.search(r"\d\.\u200b\d", fed)  # and never broken at their point
    table = run.results.top_table
    row = table.visualItemRect(table.item(0, 0))
    bar = table.cellWidget(0, 1)
    assert abs(bar.geometry().center().y() - row.center().y()) <= 1


def test_the_profiles_fused_names_drop_whole_segments_at_1280(window: MainWindow,
                                                             qtbot) -> None:
    """Profile the sample CNN at 1280x800: the Fused column (110 px) cut its names
    mid-word ("…ures/relu1/Relu"); it now shortens them by whole segments, as the Node
    column does ("…/relu1/Relu"), once shown from the header's menu."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    from onnxstudio.ui.main_window import sample_model_path
    from tests.conftest import REPO

    opened_tab(qtbot, window, sample_model_path())
    run = window.run_panel
    assert run.open_images([REPO / "resources" / "sample" / "digit_7.png"])
    qtbot.waitUntil(lambda: run.has_run() and not run.controller.busy, timeout=60000)
    window.insight.start_profile()
    qtbot.waitUntil(lambda: not window.insight._profiler.busy, timeout=60000)
    panel = window.insight.profile_panel
    view = panel.node_table()
    qtbot.waitUntil(lambda: view.model().rowCount() > 0, timeout=10000)
    assert view.isColumnHidden(4)  # Fused starts hidden: the header's menu shows it
    panel.node_columns.set_shown("Fused", True)
    shown = []
    for row in range(view.model().rowCount()):
        index = view.model().index(row, 4)
        if not index.data():
            continue
        option = QStyleOptionViewItem()
        option.rect = view.visualRect(index)
        option.fontMetrics = view.fontMetrics()
        view.itemDelegateForIndex(index).initStyleOption(option, index)
        shown.append((index.data(), option.text))
    assert shown  # Conv and Relu fused, Gemm and Relu
    for full, text in shown:
        assert view.fontMetrics().horizontalAdvance(text) <= view.columnWidth(4) - 10
        assert text == full or (text.startswith("…/") and full.endswith(text[1:]))


def test_search_results_name_the_layer_at_1280(window: MainWindow, qtbot,
                                               tmp_path: Path) -> None:
    """Find "query" in a BERT-like model at 1280x800: the Kind column took its contents'
    width and left the names ~70 px ("/en…Mul", "/enc…ight" on every row alike). Kind
    now takes two fifths at most, and a name drops whole segments, keeping its layer."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    opened_tab(qtbot, window, bert_like(tmp_path / "bert_like.onnx"))
    window.find_in_model()
    search = window.inspector.search
    search.edit.setText("query")
    search.run_search()
    results = search.results
    qtbot.waitUntil(lambda: results.topLevelItemCount() >= 8, timeout=10000)
    qtbot.wait(50)
    room = results.viewport().width()
    assert results.columnWidth(1) <= max(80, room * 2 // 5)
    shown = []
    for row in range(results.topLevelItemCount()):
        index = results.model().index(row, 0)
        option = QStyleOptionViewItem()
        option.rect = results.visualRect(index)
        option.fontMetrics = results.fontMetrics()
        results.itemDelegateForIndex(index).initStyleOption(option, index)
        shown.append(option.text)
        assert results.fontMetrics().horizontalAdvance(option.text) <= option.rect.width()
    layers = {n for n in range(4) if any(f"layer.{n}" in text for text in shown)}
    assert layers == {0, 1, 2, 3}  # each row says which layer it is


def test_the_pair_details_show_both_sides_at_1280(window: MainWindow, qtbot,
                                                  tmp_path: Path) -> None:
    """A diff at 1280x800, a changed MaxPool picked: its pair details (~220 px) held
    "float32[N×16×4×4]" and scoped names with no place to wrap, so the table grew past
    the pane and the B column, the point of a diff, was off-screen. Now long values wrap
    at their separators and both columns are in view."""
    import onnx

    from onnxstudio.ui.main_window import sample_model_path

    edited = onnx.load(str(sample_model_path()))
    pool = next(n for n in edited.graph.node if n.op_type == "MaxPool")
    next(a for a in pool.attribute if a.name == "strides").ints[:] = [1, 1]
    a = save(onnx.load(str(sample_model_path())), tmp_path / "digits_cnn.onnx")
    b = save(edited, tmp_path / "digits_cnn_edited.onnx")
    tab = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        t.layout_data is not None and not t.busy for t in tab.tabs()), timeout=60000)
    entry = next(e for e in tab.changes.rows() if e.op_type == "MaxPool")
    tab.jump_to(entry)
    details = tab.details
    qtbot.wait(50)
    assert window.width() == 1280 and details.viewport().width() < 400
    assert details.horizontalScrollBar().maximum() == 0
    assert "[1, 1]" in details.toPlainText()  # B's strides
    # and in the list, the two pools' names read apart ("/featur…MaxPool" twice before)
    tree = tab.changes.tree
    delegate = tree.itemDelegateForColumn(2)
    names = [delegate.shown(tab.changes.model.index(row, 2).data(), tree.fontMetrics(),
                            tree.columnWidth(2) - 8)[0]
             for row, e in enumerate(tab.changes.rows()) if e.op_type == "MaxPool"]
    assert len(names) == 2 and names[0] != names[1], names


def test_compare_names_each_value_at_1280(window: MainWindow, qtbot) -> None:
    """Compare Runs on the sample CNN at 1280x800: the Value column elided by characters,
    so conv1's and conv2's outputs both read "/features/c…nv_output_0" (and the pools,
    the relus alike). Values now drop whole segments and each row's text is its own."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    from onnxstudio.ui.main_window import sample_model_path
    from tests.conftest import REPO

    opened_tab(qtbot, window, sample_model_path())
    run = window.run_panel
    assert run.open_images([REPO / "resources" / "sample" / "digit_7.png"])
    qtbot.waitUntil(lambda: run.has_run() and not run.controller.busy, timeout=60000)
    window.insight.start_compare()
    qtbot.waitUntil(lambda: not window.insight._comparer.busy, timeout=60000)
    view = window.insight.compare_panel.intermediates_view
    qtbot.waitUntil(lambda: view.model().rowCount() >= 10, timeout=10000)
    qtbot.wait(50)
    shown = []
    for row in range(view.model().rowCount()):
        index = view.model().index(row, 1)
        option = QStyleOptionViewItem()
        option.rect = view.visualRect(index)
        option.fontMetrics = view.fontMetrics()
        view.itemDelegateForIndex(index).initStyleOption(option, index)
        text = view.fontMetrics().elidedText(option.text, Qt.TextElideMode.ElideMiddle,
                                             option.rect.width() - 10)  # as it is painted
        shown.append(text)
    assert len(set(shown)) == len(shown), shown


def test_diff_pane_captions_keep_the_end_of_long_file_names(window: MainWindow, qtbot,
                                                            tmp_path: Path) -> None:
    """Two exports of one model at 1280x800: the panes' captions were cut at the pane's
    edge ("B · digits_cnn_exported_from_the_train"), hiding the "_edited" that tells them
    apart. They are now elided in the middle and keep the end."""
    from PySide6.QtWidgets import QLabel

    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    stem = "digits_cnn_exported_from_the_training_run"
    a = save(tiny_mlp(), tmp_path / f"{stem}.onnx")
    b = save(edited, tmp_path / f"{stem}_edited.onnx")
    tab = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: tab.result is not None and all(
        t.layout_data is not None and not t.busy for t in tab.tabs()), timeout=60000)
    qtbot.wait(50)
    [label] = [w for w in tab.findChildren(QLabel) if w.toolTip() == str(b)]
    shown = label.shown_text() if hasattr(label, "shown_text") else label.text()
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert shown.startswith("B · ") and shown.endswith("_edited.onnx")


def test_a_diff_tab_gets_the_width_and_the_docks_come_back_after(qtbot,
                                                                 tmp_path: Path) -> None:
    """At 1280x800 the right docks kept ~500 px and each diff pane ~260: while a diff
    tab is current they step aside; on the model's tab they are back as they were (the
    same docks, the same one raised, the same width), and so in the layout saved."""
    window = shown_window(qtbot)
    edited = tiny_mlp()
    diff_edits.change_attribute(edited, "Softmax", "axis", 1)
    a, b = save(tiny_mlp(), tmp_path / "a.onnx"), save(edited, tmp_path / "b.onnx")
    tab = opened_tab(qtbot, window, a)
    window.show_panel("model")
    qtbot.wait(50)
    right = [k for k, d in window.docks.items() if d.isVisible()
             and window.dockWidgetArea(d) == Qt.DockWidgetArea.RightDockWidgetArea]
    width = window.docks["model"].width()
    assert "model" in right and width >= 400  # the Run panel's controls keep it wide
    diff = diffing.open_diff(window, a, b)
    qtbot.waitUntil(lambda: diff.result is not None and all(
        t.layout_data is not None and not t.busy for t in diff.tabs()), timeout=60000)
    qtbot.wait(50)
    assert not any(window.docks[k].isVisible() for k in right)
    assert min(diff.side_a.width(), diff.side_b.width()) >= 400
    assert window.width() == 1280
    window.tabs.setCurrentWidget(tab)
    qtbot.wait(50)
    assert all(window.docks[k].isVisible() for k in right)
    assert not window.docks["model"].visibleRegion().isEmpty()  # raised, as it was
    assert abs(window.docks["model"].width() - width) <= 2
    window.tabs.setCurrentWidget(diff)  # closed on the diff: saved with the docks
    qtbot.wait(50)
    window.close()
    again = shown_window(qtbot)
    qtbot.wait(50)
    assert all(again.docks[k].isVisible() for k in right)
    TaskRunner.wait_all()
