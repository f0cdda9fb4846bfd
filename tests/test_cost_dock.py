"""The Cost dock through the real window: rows sorted by MACs, CSV, the canvas coloured by a
cost with a log-scale legend, collapsed groups showing their sum."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from onnxstudio.model.formatting import human_count
from onnxstudio.render.overlay import HEAT
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from tests.conftest import ladder_model, shown_window


def _open(window: MainWindow, qtbot, path: Path) -> ModelTab:
    tab = window.open_paths([str(path)])[0]
    qtbot.waitUntil(lambda: not tab.busy and tab.layout_data is not None, timeout=60000)
    return tab


def _costed(window: MainWindow, qtbot) -> None:
    window.commands["cost"].trigger()
    panel = window.cost.cost_panel
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.busy, timeout=60000)


def test_cost_dock_lists_nodes_by_macs_and_exports(qtbot, tmp_path: Path) -> None:
    window = shown_window(qtbot)
    _open(window, qtbot, sample_model_path())
    _costed(window, qtbot)
    assert window.docks["cost"].isVisible()
    panel = window.cost.cost_panel
    table = panel.node_model
    macs = [table.rows[r].macs for r in range(table.rowCount())]
    assert macs == sorted(macs, reverse=True) and macs[0] > 0
    first = table.index(0, 1).data()
    assert first in {"Conv", "Gemm", "MatMul"}
    assert "MACs" in panel.summary.text() and "peak alive" in panel.summary.text()
    # the header sorts by the numbers, not their text ("9.4K" < "12K")
    panel.node_view.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    params = [table.rows[r].params for r in range(table.rowCount())]
    assert params == sorted(params, reverse=True)
    out = panel.export_csv(tmp_path / "c.csv")
    assert out is not None and out.read_text().startswith("id,name,op_type,macs")


def test_colour_by_cost_shows_a_log_legend_and_group_sums(qtbot) -> None:
    window = shown_window(qtbot)
    tab = _open(window, qtbot, ladder_model("bert12.onnx"))
    _costed(window, qtbot)
    panel = window.cost.cost_panel
    panel.colour_combo.setCurrentIndex(panel.colour_combo.findData("macs"))
    qtbot.waitUntil(lambda: tab.overlay_data is not None and tab.view.legend.isVisible(),
                    timeout=60000)
    assert tab.view.legend.title.text() == "MACs (log scale)"
    overlay = tab.view.overlay()
    assert overlay is not None and len(overlay.legend) == 6  # 0, then five log steps
    cost = panel.result()
    assert cost is not None
    matmul = next(n for n in cost.nodes if n.op_type == "MatMul")
    assert overlay.badges[matmul.id] == human_count(matmul.macs)
    # collapsed, a group is coloured and labelled with the sum of the nodes it hides
    before = tab.layout_data
    window.collapse_all()
    qtbot.waitUntil(lambda: tab.layout_data is not before and not tab.busy, timeout=60000)
    qtbot.waitUntil(lambda: tab.view.overlay() is not overlay, timeout=60000)
    overlay = tab.view.overlay()
    assert overlay is not None
    boxes = {b.id for b in tab.layout_data.boxes}
    scope = next(s for s in cost.scopes if s.name in boxes and s.macs)
    assert overlay.badges[scope.name] == human_count(scope.macs)
    assert overlay.fill(scope.name) != HEAT[0]
    assert overlay.tips[scope.name].startswith("MACs (log scale): ")
    # ✕ on the legend: plain colours, and the combo follows
    tab.view.legend.closed.emit()
    assert tab.overlay_data is None and panel.chosen_cost() == "none"


def test_where_it_runs_colours_by_provider_and_names_folded_nodes(qtbot, tmp_path) -> None:
    from tests.builders import save
    from tests.test_placement import FUSED_CONV, conv_bn_relu

    window = shown_window(qtbot)
    tab = _open(window, qtbot, save(conv_bn_relu(), tmp_path / "cbr.onnx"))
    window.commands["placement"].trigger()
    panel = window.cost.placement_panel
    qtbot.waitUntil(lambda: panel.result() is not None and not panel.busy, timeout=60000)
    assert window.docks["placement"].isVisible()
    rows = {panel.table.rows[r].name: r for r in range(panel.table.rowCount())}
    bn = rows["/block/bn/BatchNormalization"]
    conv = rows["/block/conv/Conv"]
    assert re.fullmatch(rf"{FUSED_CONV} \(Conv \+ BatchNormalization \+ Relu\)",
                        panel.table.index(conv, 2).data())  # the kernel that really runs
    assert re.fullmatch(rf"folded into {FUSED_CONV} '/block/conv/Conv'",
                        panel.table.index(bn, 2).data())
    assert panel.table.index(rows["/block/Relu"], 2).data().startswith("folded into")
    tip = panel.table.index(conv, 2).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith("absorbs:\n  /block/bn/BatchNormalization\n  /block/Relu")
    assert panel.table.index(rows["/block/conv/Conv"], 1).data() == "CPU"
    assert "CPU: 3 nodes" in panel.summary.text()
    qtbot.waitUntil(lambda: tab.overlay_data is not None, timeout=60000)
    overlay = tab.view.overlay()
    assert overlay is not None and tab.view.legend.title.text().startswith("Where it runs")
    assert [caption for _, caption in overlay.legend] == ["CPU 75 %", "not run (folded at load)"]
    assert overlay.badges["n0"] == "fused" and overlay.badges["n1"] == "folded"
    assert overlay.badges["n2"] == "folded"
    panel.colour_check.setChecked(False)
    assert tab.overlay_data is None
    panel.colour_check.setChecked(True)  # colours again; Run → Clear Heatmap: the box follows
    qtbot.waitUntil(lambda: tab.overlay_data is not None, timeout=60000)
    window.commands["clear_overlay"].trigger()
    assert tab.overlay_data is None and not panel.colour_check.isChecked()


def test_cost_tables_keep_the_layer_number_of_an_elided_name(qtbot, tmp_path: Path) -> None:
    """Scoped names drop whole segments, as the profile's do: "…/layer.3/…/MatMul", not
    "…ermediate/dense/MatMul" on every layer's row alike."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QStyleOptionViewItem

    from tests.builders import make_model, save

    names = [f"/bert/encoder/layer.{i}/intermediate/dense/MatMul" for i in range(4)]
    nodes = [helper.make_node("MatMul", [f"h{i}", f"w{i}"], [f"h{i + 1}"], name=n)
             for i, n in enumerate(names)]
    weights = [numpy_helper.from_array(np.ones((8, 8), np.float32), f"w{i}") for i in range(4)]
    graph = helper.make_graph(
        nodes, "layers", [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("h4", TensorProto.FLOAT, [1, 8])], weights)
    window = shown_window(qtbot)
    _open(window, qtbot, save(make_model(graph), tmp_path / "layers.onnx"))
    _costed(window, qtbot)
    view = window.cost.cost_panel.node_view
    index = view.model().index(0, 0)
    option = QStyleOptionViewItem()
    option.fontMetrics = view.fontMetrics()
    option.rect = QRect(0, 0, view.fontMetrics().horizontalAdvance("…/layer.0/…/MatMul") + 14,
                        20)
    view.itemDelegateForColumn(0).initStyleOption(option, index)
    assert re.search(r"layer\.\d", option.text) and option.text.endswith("/MatMul")


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800)])
def test_cost_table_numbers_fit_the_dock_and_names_elide(qtbot, tmp_path: Path, size) -> None:
    """Issue 34: at 1920 px the Params, Output and Memory columns scrolled out of the
    dock. Every number shown is whole inside it; the name column takes what is left."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.builders import make_model, save

    names = [f"/bert/encoder/layer.{i}/attention/output/dense/MatMul" for i in range(6)]
    nodes = [helper.make_node("MatMul", [f"h{i}", f"w{i}"], [f"h{i + 1}"], name=n)
             for i, n in enumerate(names)]
    weights = [numpy_helper.from_array(np.ones((384, 384), np.float32), f"w{i}")
               for i in range(6)]
    graph = helper.make_graph(
        nodes, "layers", [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [128, 384])],
        [helper.make_tensor_value_info("h6", TensorProto.FLOAT, [128, 384])], weights)
    window = shown_window(qtbot, *size)
    _open(window, qtbot, save(make_model(graph), tmp_path / "layers.onnx"))
    _costed(window, qtbot)
    view = window.cost.cost_panel.node_view
    qtbot.waitUntil(lambda: view.isVisible() and view.viewport().width() > 100)
    header, width = view.horizontalHeader(), view.viewport().width()
    assert view.horizontalScrollBar().maximum() == 0
    for column in range(1, view.model().columnCount()):  # whole, inside the dock
        if header.isSectionHidden(column):  # Element ops and Memory, until asked for
            continue
        right = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert right <= width, (view.model().headerData(column, Qt.Orientation.Horizontal))
        assert header.sectionSize(column) >= view.sizeHintForColumn(column)
    shown = [c for c in range(1, header.count()) if not header.isSectionHidden(c)]
    rest = width - sum(header.sectionSize(c) for c in shown)
    assert header.sectionSize(0) == max(rest, 48)  # the names take what is left


def test_the_node_tables_order_is_sorted_on_the_worker(qtbot, monkeypatch) -> None:
    """Sorting dag100k's 100k nodes froze the window 0.3 s when the dock did it: the
    worker that counts sorts them, and the table shows that order."""
    import threading

    from onnxstudio.model.cost.compute import ModelCost

    sorted_on: list[str] = []
    ranked = ModelCost.ranked

    def recording(self: ModelCost) -> list:
        if self._ranked is None:
            sorted_on.append(threading.current_thread().name)
        return ranked(self)

    monkeypatch.setattr(ModelCost, "ranked", recording)
    window = shown_window(qtbot)
    _open(window, qtbot, sample_model_path())
    _costed(window, qtbot)
    assert sorted_on and threading.main_thread().name not in sorted_on
    table = window.cost.cost_panel.node_model
    cost = window.cost.cost_panel.result()
    assert cost is not None and table.rows == cost.ranked()
