"""The Cost, Profile and Placement tables' name columns: what the numbers leave, wider by
the user's hand (remembered), never squeezed by a long operator type, and reading a
BERT node name at the window's default layout at 1280x800 and 1920x1080."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView

from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import bert_like, save
from tests.conftest import shown_window
from tests.test_main_window import wait_open


@pytest.fixture(autouse=True)
def _drain_workers():
    yield
    TaskRunner.wait_all()


def _shown_names(view: QTableView) -> list[tuple[str, str]]:
    """(full name, the text the user reads) of the name column's rows on screen: the
    delegate's shortening, then the view's own elision at the left."""
    model, shown = view.model(), []
    width = view.columnWidth(0)
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        if view.visualRect(index).top() > view.viewport().height():
            break
        option = QStyleOptionViewItem()
        option.rect = view.visualRect(index)
        option.fontMetrics = view.fontMetrics()
        option.widget = view
        view.itemDelegateForIndex(index).initStyleOption(option, index)
        text = view.fontMetrics().elidedText(option.text, Qt.TextElideMode.ElideLeft,
                                             width - 7)
        shown.append((str(index.data()), text))
    return shown


def _costed(qtbot, window: MainWindow) -> QTableView:
    window.cost.show_cost()
    qtbot.waitUntil(lambda: window.cost.cost_panel.result() is not None, timeout=60000)
    view = window.cost.cost_panel.node_view
    qtbot.waitUntil(lambda: view.model().rowCount() > 0, timeout=10000)
    return view


def _bert_like(folder: Path) -> Path:
    return bert_like(folder / "bert_like.onnx", layers=12, prefix="/bert/encoder", norms=True)


def test_the_cost_tables_names_widen_by_hand_and_stay_so(qtbot, tmp_path: Path) -> None:
    """At 1920x1080 the node column had what the numbers left (~110 px: "…yer.10/…/MatMul")
    and could not be widened; dragged wider it reads "…/layer.10/…/MatMul" whole, the
    table scrolling sideways, and a new window keeps that width."""
    path = _bert_like(tmp_path)
    window = shown_window(qtbot, 1920, 1080)
    wait_open(qtbot, window.open_paths([str(path)])[0])
    view = _costed(qtbot, window)
    header = view.horizontalHeader()
    rest = view.viewport().width() - sum(header.sectionSize(c) for c in range(1, header.count()))
    assert view.columnWidth(0) == max(rest, 48)  # the numbers' leftovers
    header.resizeSection(0, 320)  # the user drags the column's edge
    assert view.columnWidth(0) == 320
    shown = _shown_names(view)
    assert shown
    for full, text in shown:
        layer = full.split("/")[3]  # "layer.10"
        assert text.endswith(full.rsplit("/", 1)[1]) and f"/{layer}/" in text, text
    TaskRunner.wait_all()
    again = shown_window(qtbot, 1920, 1080)
    wait_open(qtbot, again.open_paths([str(path)])[0])
    assert _costed(qtbot, again).columnWidth(0) == 320


def test_a_long_operator_type_leaves_the_profiles_names_their_room(qtbot,
                                                                  tmp_path: Path) -> None:
    """A real profile at 1920x1080: "LayerNormalization" took 124 px of the node table,
    the names squeezed to 140; the Op type column now stops at 96 px, cut at its end, and
    the names keep the room, each ending with the node's own name."""
    from onnxstudio.ui.insight.profile_panel import OP_TYPE_CAP, ProfileOptions

    window = shown_window(qtbot, 1920, 1080)
    wait_open(qtbot, window.open_paths([str(_bert_like(tmp_path))])[0])
    window.insight.start_profile(ProfileOptions("disable", 1, 0))
    panel = window.insight.profile_panel
    qtbot.waitUntil(lambda: panel.result() is not None, timeout=60000)
    view = panel.node_table()
    qtbot.waitUntil(lambda: view.model().rowCount() > 0 and view.isVisible(), timeout=10000)
    assert view.columnWidth(1) <= OP_TYPE_CAP
    norm = next(r for r in range(view.model().rowCount())
                if view.model().index(r, 1).data() == "LayerNormalization")
    option = QStyleOptionViewItem()
    index = view.model().index(norm, 1)
    view.itemDelegateForIndex(index).initStyleOption(option, index)
    assert option.textElideMode == Qt.TextElideMode.ElideRight  # "LayerNorm…"
    header = view.horizontalHeader()
    others = sum(header.sectionSize(c) for c in range(1, header.count()))
    assert view.columnWidth(0) == max(view.viewport().width() - others, view.names.least)
    for full, text in _shown_names(view):
        assert text.endswith(full.rsplit("/", 1)[1]), text


TYPICAL = "/bert/encoder/layer.11/attention/self/MatMul"


def _shown_for(view: QTableView, full: str) -> str:
    """What the name column shows for the row named ``full``, wherever it is scrolled."""
    model = view.model()
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == full)
    index = model.index(row, 0)
    option = QStyleOptionViewItem()
    option.rect = view.visualRect(index)
    option.rect.setWidth(view.columnWidth(0))
    option.fontMetrics = view.fontMetrics()
    option.widget = view
    view.itemDelegateForIndex(index).initStyleOption(option, index)
    return view.fontMetrics().elidedText(option.text, Qt.TextElideMode.ElideLeft,
                                         view.columnWidth(0) - 7)


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_a_bert_name_reads_in_each_table_at_the_default_layout(qtbot, tmp_path: Path,
                                                               size) -> None:
    """Issue 34: at a fresh window's dock the Cost table's numbers took 346 px and left
    the names 67 ("…/MatMul"). Now less-used columns start hidden (the header's menu
    shows them), the operator type and kernel columns are capped, counts have three
    digits and a wide window's docks are wider: the name reads whole, or without only
    its common "/bert/encoder" start, in the Cost, Profile and Placement tables."""
    from onnxstudio.ui.insight.profile_panel import ProfileOptions

    path = bert_like(tmp_path / "bert.onnx", layers=12, prefix="/bert/encoder", norms=True,
                     scores=True)
    window = shown_window(qtbot, *size)
    wait_open(qtbot, window.open_paths([str(path)])[0])
    tables = {"cost": _costed(qtbot, window)}
    window.insight.start_profile(ProfileOptions("disable", 1, 0))
    profile = window.insight.profile_panel
    qtbot.waitUntil(lambda: profile.result() is not None, timeout=60000)
    tables["profile"] = profile.node_table()
    window.cost.show_placement()
    placement = window.cost.placement_panel
    placement.find_button.click()
    qtbot.waitUntil(lambda: placement.result() is not None, timeout=60000)
    tables["placement"] = placement.view
    for name, view in tables.items():
        window.show_panel(name)
        qtbot.waitUntil(lambda v=view: v.isVisible() and v.model().rowCount() > 0)
        shown = _shown_for(view, TYPICAL)
        assert shown in (TYPICAL, "…/layer.11/attention/self/MatMul"), (name, shown)
        if size[0] == 1920:
            assert shown == TYPICAL, (name, shown)


def test_the_headers_menu_shows_a_hidden_column_and_a_new_window_keeps_it(qtbot,
                                                                        tmp_path: Path) -> None:
    """Element ops and Memory start hidden; the header's menu lists every column but the
    names, checked when shown; showing Memory there shows it, and in the next window."""
    from tests.builders import tiny_mlp

    path = save(tiny_mlp(), tmp_path / "m.onnx")
    window = shown_window(qtbot)
    wait_open(qtbot, window.open_paths([str(path)])[0])
    view = _costed(qtbot, window)
    header = view.horizontalHeader()
    titles = [" ".join(str(view.model().headerData(c, Qt.Orientation.Horizontal)).split())
              for c in range(header.count())]
    assert [t for c, t in enumerate(titles) if header.isSectionHidden(c)] == \
        ["Element ops", "Memory"]
    menu = view.chooser.menu()
    entries = {a.text(): a for a in menu.actions()}
    assert list(entries) == titles[1:]
    assert not entries["Memory"].isChecked() and entries["MACs"].isChecked()
    entries["Memory"].trigger()
    memory = titles.index("Memory")
    assert not header.isSectionHidden(memory) and header.sectionSize(memory) > 0
    TaskRunner.wait_all()  # the choice is written on a worker
    again = shown_window(qtbot)
    wait_open(qtbot, again.open_paths([str(path)])[0])
    view = _costed(qtbot, again)
    assert not view.horizontalHeader().isSectionHidden(memory)
    assert view.horizontalHeader().isSectionHidden(titles.index("Element ops"))
