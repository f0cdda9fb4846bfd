"""The Cost and Profile tables' name columns at 1920x1080: what the numbers leave, wider
by the user's hand (remembered), and never squeezed by a long operator type."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView

from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.tasks import TaskRunner
from tests.builders import bert_like
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
