"""The compare panel, fed real comparisons: verdicts, tinted rows, sorting, jumps, controls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from onnxstudio.model.open import load_model
from onnxstudio.runner.compare import Comparison, compare, difference, parse_config
from onnxstudio.runner.intermediates import node_outputs
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.tolerance import format_tolerance
from onnxstudio.ui.insight.compare_options import CompareOptions
from onnxstudio.ui.insight.compare_panel import ComparePanel
from onnxstudio.ui.insight.compare_table import (
    FIRST_TINT,
    NODE_ID_ROLE,
    TINT,
    DifferenceTableModel,
    magnitude,
)
from onnxstudio.ui.widgets.tables import SORT_ROLE, delegate_text_padding
from tests.conftest import REPO, shared_model

SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"
PERTURBED_WEIGHT = "features.conv2.weight"  # read by /features/conv2/Conv, node n4
PERTURBED_NODE = "n4"


@pytest.fixture
def panel(qtbot) -> Iterator[ComparePanel]:
    p = ComparePanel()
    qtbot.addWidget(p)
    p.resize(400, 800)
    p.show()
    yield p


@pytest.fixture
def perturbed(tmp_path: Path) -> Path:
    """The sample model with one Conv weight scaled by 1.5."""
    proto = onnx.load(str(SAMPLE))
    init = next(t for t in proto.graph.initializer if t.name == PERTURBED_WEIGHT)
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * 1.5, init.name))
    out = tmp_path / "digits_perturbed.onnx"
    onnx.save(proto, str(out))
    return out


@pytest.fixture
def perturbed_result(perturbed: Path) -> Comparison:
    cfg = parse_config("ort:cpu:disabled")
    return compare(RunRequest(SAMPLE, random=True), cfg, cfg, model_b=perturbed)


def column(panel: ComparePanel, col: int, role: int = Qt.ItemDataRole.DisplayRole) -> list:
    proxy = panel.intermediates_table().model()
    return [proxy.index(r, col).data(role) for r in range(proxy.rowCount())]


def row_of(panel: ComparePanel, node_id: str) -> int:
    return panel.intermediates_table().node_ids().index(node_id)


# ------------------------------------------------------------------ real comparisons
def test_sample_model_agrees_between_ort_and_reference(panel: ComparePanel) -> None:
    result = compare(RunRequest(SAMPLE, random=True), parse_config("ort:cpu:all"),
                     parse_config("reference"))
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(result)
    assert panel.verdict_state() == "ok"
    assert panel.verdict_text() == ("The output and 12 intermediate values agree within 1e-3 "
                                    "for float32 — the default for the dtype "
                                    "(A: ort:cpu:all, B: reference)")
    assert not panel.jump_button.isEnabled()
    graph = onnx.load(str(SAMPLE)).graph
    assert panel.intermediates_table().model().rowCount() == len(node_outputs(graph)) == 12
    assert column(panel, 0)[:2] == ["Div n0", "Conv n1"]
    assert column(panel, 5) == ["✓"] * 12
    assert column(panel, 0, Qt.ItemDataRole.BackgroundRole) == [None] * 12
    outputs = panel.outputs_table().model()
    assert [outputs.index(0, c).data() for c in (0, 1)] == ["probabilities", "1×10"]

    # Max rel spans several orders of magnitude here ("1.16e-07", "0.00109"): sorting must
    # follow the numbers, not their text.
    panel.intermediates_table().sortByColumn(3, Qt.SortOrder.DescendingOrder)
    by_name = {d.name: d.max_rel for d in result.intermediates}
    shown = [by_name[name] for name in column(panel, 1)]
    assert shown == sorted(by_name.values(), reverse=True)


def test_perturbed_copy_names_the_node_and_jumps_to_it(
        qtbot, panel: ComparePanel, perturbed: Path, perturbed_result: Comparison) -> None:
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_model_b(perturbed)
    panel.set_result(perturbed_result)
    conv2 = next(d for d in perturbed_result.intermediates if d.producer == 4)
    text = panel.verdict_text()
    assert panel.verdict_state() == "diverged"
    assert text.startswith("First divergence: Conv '/features/conv2/Conv' (n4) — output "
                           "/features/conv2/Conv_output_0: max abs ")
    assert f"max abs {conv2.max_abs:.3g}, max rel {conv2.max_rel:.3g}" in text
    assert "on digits_perturbed.onnx" in text

    assert panel.jump_button.isEnabled()
    with qtbot.waitSignal(panel.nodeActivated, timeout=1000) as blocker:
        qtbot.mouseClick(panel.jump_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [PERTURBED_NODE]
    view = panel.intermediates_table()
    assert view.currentIndex().row() == row_of(panel, PERTURBED_NODE)
    details = panel.details_label.text().replace("\u200b", "").replace("\u2060", "")
    assert details.startswith("/features/conv2/Conv_output_0 · produced by Conv")  # unelided

    backgrounds = column(panel, 0, Qt.ItemDataRole.BackgroundRole)
    at = row_of(panel, PERTURBED_NODE)
    assert backgrounds[at].color() == FIRST_TINT
    assert all(b is None for b in backgrounds[:at])  # upstream of the change: untouched
    assert all(b.color() == TINT for b in backgrounds[at + 1:])
    assert column(panel, 5)[at] == "✗"


def test_sorting_by_max_rel_then_back_to_graph_order(
        panel: ComparePanel, perturbed_result: Comparison) -> None:
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(perturbed_result)
    view = panel.intermediates_table()
    topological = [f"n{i}" for i in range(12)]
    assert view.node_ids() == topological
    view.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    first = view.node_ids()[0]
    assert first is not None and int(first[1:]) >= 4  # the changed node or one it feeds
    values = column(panel, 3, SORT_ROLE)
    assert values == sorted(values, reverse=True) and values[0] > 1e-3
    panel.graph_order_button.click()
    assert view.node_ids() == topological


def test_rows_activate_their_node_by_enter_and_double_click(
        qtbot, panel: ComparePanel, perturbed_result: Comparison) -> None:
    panel.set_model(SAMPLE)  # no Model: the Node column falls back to ids
    panel.set_result(perturbed_result)
    view = panel.intermediates_table()
    assert column(panel, 0)[5] == "n5"
    view.setCurrentIndex(view.model().index(5, 1))
    with qtbot.waitSignal(panel.nodeActivated, timeout=1000) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert blocker.args == ["n5"]
    pos = view.visualRect(view.model().index(2, 2)).center()
    with qtbot.waitSignal(panel.nodeActivated, timeout=1000) as blocker:
        # A real double-click: item views need the first click's press before the double.
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["n2"]


def test_only_beyond_tolerance_filter(panel: ComparePanel,
                                      perturbed_result: Comparison) -> None:
    panel.set_model(SAMPLE)
    panel.set_result(perturbed_result)
    exceeding = [f"n{d.producer}" for d in perturbed_result.intermediates if d.exceeds]
    assert 0 < len(exceeding) < 12
    panel.only_exceeding_check.setChecked(True)
    assert panel.intermediates_table().node_ids() == exceeding
    panel.only_exceeding_check.setChecked(False)
    assert len(panel.intermediates_table().node_ids()) == 12


def test_squeezenet_end_to_end(panel: ComparePanel) -> None:
    model = shared_model("zoo/onnx_light/light_squeezenet.onnx")
    result = compare(RunRequest(model, random=True), parse_config("ort:cpu:all"),
                     parse_config("ort:cpu:disabled"))
    loaded = load_model(model)
    panel.set_model(model, loaded)
    panel.set_result(result)
    assert result.first_divergence is None
    assert panel.verdict_state() == "ok"
    assert panel.verdict_text().startswith(
        f"The output and {len(result.intermediates)} intermediate values agree within 1e-3")
    view = panel.intermediates_table()
    assert view.model().rowCount() == len(result.intermediates) > 50
    assert view.node_ids() == [f"n{d.producer}" for d in result.intermediates]
    ops = {n.index: n.op_type for n in loaded.graph.nodes}
    assert column(panel, 0) == [f"{ops[d.producer]} n{d.producer}"
                                for d in result.intermediates if d.producer is not None]


# ------------------------------------------------------------------ display details
def test_shape_mismatch_is_spelled_out() -> None:
    d = difference("x", np.zeros((1, 3), np.float32), np.zeros((1, 4), np.float32), 1e-3)
    d.producer = 7
    for intermediates, col in ((False, 1), (True, 2)):
        model = DifferenceTableModel(intermediates)
        model.set_rows([d], {7: ("conv2", "Conv")})
        assert model.index(0, col).data() == "1×3 vs 1×4"
        assert model.index(0, 5).data() == "✗"
        assert model.index(0, 0).data(NODE_ID_ROLE) == "n7"
    assert DifferenceTableModel(True).node_text(d) == "n7"


def test_tolerance_is_written_as_a_power_of_ten() -> None:
    assert [format_tolerance(v) for v in (1e-3, 5e-5, 0.01, 0.0, 2500.0)] == \
        ["1e-3", "5e-5", "0.01", "0", "2.5e3"]


# ------------------------------------------------------------------ controls
def test_defaults_and_compare_emits_the_chosen_configs(qtbot, panel: ComparePanel) -> None:
    labels = [panel.form.a_combo.itemText(i) for i in range(panel.form.a_combo.count())]
    assert {"onnxruntime CPU · all optimisations", "onnxruntime CPU · no optimisations",
            "onnx reference evaluator"} <= set(labels)
    assert panel.options() == CompareOptions(parse_config("ort:cpu:all"),
                                             parse_config("ort:cpu:disabled"), None, None)
    assert panel.form.tolerance_edit.text() == "auto"  # each value's dtype decides
    assert not panel.form.compare_button.isEnabled()  # no model yet
    panel.set_model(SAMPLE)
    panel.form.a_combo.setCurrentText("onnx reference evaluator")
    panel.form.b_combo.setCurrentText("onnxruntime CPU · all optimisations")
    panel.form.tolerance_edit.setText("5e-5")
    with qtbot.waitSignal(panel.compareRequested, timeout=1000) as blocker:
        qtbot.mouseClick(panel.form.compare_button, Qt.MouseButton.LeftButton)
    options = blocker.args[0]
    assert isinstance(options, CompareOptions)
    assert options.a == parse_config("reference")
    assert options.b == parse_config(options.b.label) == parse_config("ort:cpu:all")
    assert options.tolerance == 5e-5 and options.model_b is None


def test_model_b_is_picked_cleared_and_forgotten_with_the_model(
        qtbot, panel: ComparePanel, perturbed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    panel.set_model(SAMPLE)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *args, **kwargs: (str(perturbed), "")))
    qtbot.mouseClick(panel.form.model_b_button, Qt.MouseButton.LeftButton)
    assert panel.form.model_b_label.text() == "digits_perturbed.onnx"
    with qtbot.waitSignal(panel.compareRequested, timeout=1000) as blocker:
        panel.form.compare_button.click()
    assert blocker.args[0].model_b == perturbed
    qtbot.mouseClick(panel.form.clear_model_b_button, Qt.MouseButton.LeftButton)
    assert panel.form.model_b_label.text() == "same model" and panel.options().model_b is None
    panel.set_model_b(perturbed)
    panel.set_model(perturbed)  # another model: its copy is not this one's
    assert panel.options().model_b is None


@pytest.mark.parametrize("text", ["abc", "-1", "nan", "inf", ""])
def test_invalid_tolerance_shows_an_error_and_emits_nothing(
        qtbot, panel: ComparePanel, text: str) -> None:
    panel.set_model(SAMPLE)
    panel.form.tolerance_edit.setText(text)
    with qtbot.assertNotEmitted(panel.compareRequested):
        qtbot.mouseClick(panel.form.compare_button, Qt.MouseButton.LeftButton)
    assert panel.error_text().startswith("Tolerance")
    panel.form.tolerance_edit.setText("1e-4")
    with qtbot.waitSignal(panel.compareRequested, timeout=1000):
        panel.form.compare_button.click()
    assert panel.error_text() == ""


def test_choices_are_restored_in_a_new_panel(qtbot, panel: ComparePanel) -> None:
    panel.set_model(SAMPLE)
    panel.form.a_combo.setCurrentText("onnx reference evaluator")
    panel.form.b_combo.setCurrentText("onnxruntime CPU · all optimisations")
    panel.form.tolerance_edit.setText("2.5e-4")
    with qtbot.waitSignal(panel.colourToggled, timeout=1000) as blocker:
        panel.form.colour_check.setChecked(False)
    assert blocker.args == [False]
    with qtbot.waitSignal(panel.compareRequested, timeout=1000):
        panel.form.compare_button.click()
    again = ComparePanel()
    qtbot.addWidget(again)
    assert again.form.a_combo.currentText() == "onnx reference evaluator"
    assert again.form.b_combo.currentText() == "onnxruntime CPU · all optimisations"
    assert again.form.tolerance_edit.text() == "2.5e-4"
    assert not again.colour_by_divergence()
    assert again.options() == CompareOptions(parse_config("reference"),
                                             parse_config("ort:cpu:all"), 2.5e-4, None)


def test_busy_state_and_new_model_clear_the_result(
        panel: ComparePanel, perturbed_result: Comparison) -> None:
    panel.set_model(SAMPLE)
    assert panel.hint.isVisibleTo(panel) and not panel.results.isVisibleTo(panel)
    panel.set_busy(True, "Comparing on A…")
    assert not panel.form.compare_button.isEnabled()
    assert panel.job.progress.isVisibleTo(panel) and panel.job.progress.maximum() == 0
    assert panel.job.status_label.text() == "Comparing on A…"
    panel.set_busy(False)
    assert panel.form.compare_button.isEnabled() and not panel.job.progress.isVisibleTo(panel)
    panel.set_result(perturbed_result)
    assert panel.result() is perturbed_result and panel.results.isVisibleTo(panel)
    panel.set_model(SAMPLE)
    assert panel.result() is None and panel.verdict_text() == ""
    assert panel.intermediates_table().model().rowCount() == 0
    assert panel.hint.isVisibleTo(panel) and "random inputs" in panel.hint.text()


def test_errors_show_in_a_dismissable_banner(qtbot, panel: ComparePanel) -> None:
    panel.show_error("digits_cnn.onnx: onnx's reference evaluator cannot run this model")
    assert "reference evaluator" in panel.error_text()
    close = panel.banner.findChild(type(panel.form.clear_model_b_button))
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    assert panel.error_text() == ""


def test_value_column_stays_readable_in_a_narrow_dock(qtbot, panel: ComparePanel,
                                                      perturbed_result: Comparison) -> None:
    """In the Run dock's width the Value column read "…" on every row: it keeps room for
    16 characters and the table scrolls sideways below that."""
    panel.resize(330, 800)
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(perturbed_result)
    qtbot.wait(50)
    table = panel.intermediates_table()
    assert table.columnWidth(1) >= table.fontMetrics().horizontalAdvance("x" * 16)


def test_a_large_comparison_lands_without_reading_every_row(
        panel: ComparePanel, perturbed_result: Comparison,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """BERT-12's comparison froze the window 330 ms as it landed: the proxy sorted by
    asking every row twice per comparison, and the Node column measured every row. Now
    the rows come sorted and the first ones size the column."""
    from dataclasses import replace

    many = replace(perturbed_result,
                   intermediates=list(perturbed_result.intermediates) * 200)  # 2,400 rows
    asked: list[int] = []
    original = DifferenceTableModel.role_data
    monkeypatch.setattr(DifferenceTableModel, "role_data",
                        lambda self, *a: asked.append(1) or original(self, *a))
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(many)
    assert panel.intermediates_table().model().rowCount() == 2400
    assert len(asked) < 500


def test_a_large_comparison_lands_asking_python_nothing_per_row(
        panel: ComparePanel, perturbed_result: Comparison) -> None:
    """dag100k's 100k rows: a Python ``filterAcceptsRow`` was called for every row as they
    landed, and the Node column's order index built for all (65 ms of the window). Now
    Qt filters by itself and the index waits for the first sort by Node; sorting and the
    "Only ✗" filter still see every row."""
    import sys
    from collections import Counter
    from dataclasses import replace
    from types import FrameType

    many = replace(perturbed_result, intermediates=[  # 24,000 rows
        replace(d) for _ in range(2000) for d in perturbed_result.intermediates])
    panel.set_model(SAMPLE, load_model(SAMPLE))
    calls: Counter[tuple[str, str]] = Counter()  # Python functions, by how often called

    def count(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            calls[(frame.f_code.co_filename, frame.f_code.co_name)] += 1

    sys.setprofile(count)
    try:
        panel.set_result(many)
    finally:
        sys.setprofile(None)
    table = panel.intermediates_table()
    assert table.model().rowCount() == 24000
    assert max(calls.values()) < 1000, calls.most_common(3)  # none once per row
    exceeding = sum(d.exceeds for d in many.intermediates)
    panel.only_exceeding_check.setChecked(True)
    assert table.model().rowCount() == exceeding > 0
    panel.only_exceeding_check.setChecked(False)
    table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # back to graph order
    assert column(panel, 1)[:12] == [d.name for d in perturbed_result.intermediates]


def test_a_comparison_fills_the_table_once_and_a_paint_asks_once_per_cell(
        panel: ComparePanel, perturbed_result: Comparison) -> None:
    """Issue 34: resnet50's comparison landed through a sort-filter proxy that asked the
    model's ``data`` once per role of every painted cell (~670 Python calls a paint,
    repainted 2-3 times). Now one reset fills the table the view reads directly, a
    painted cell is one ``multiData`` call with its text formatted once, and rows are
    never measured."""
    import sys
    from collections import Counter
    from dataclasses import replace
    from types import FrameType

    from PySide6.QtWidgets import QHeaderView

    many = replace(perturbed_result, intermediates=[
        replace(d) for _ in range(20) for d in perturbed_result.intermediates])
    panel.set_model(SAMPLE, load_model(SAMPLE))
    view = panel.intermediates_table()
    assert view.model() is view.source  # no proxy between them
    assert view.verticalHeader().sectionResizeMode(0) == QHeaderView.ResizeMode.Fixed
    fills: Counter[str] = Counter()
    view.model().modelReset.connect(lambda: fills.update(["reset"]))
    view.model().layoutChanged.connect(lambda: fills.update(["layout"]))
    view.model().rowsInserted.connect(lambda *_: fills.update(["rows"]))
    panel.set_result(many)
    assert fills == {"reset": 1}
    calls: Counter[str] = Counter()

    def count(frame: FrameType, event: str, _arg: object) -> None:
        code = frame.f_code
        if event == "call" and code.co_name in ("data", "multiData"):
            calls[code.co_name] += 1
        elif event == "call" and code.co_filename.endswith("compare_table.py"):
            calls["formatting"] += code.co_name == "<lambda>"

    for paint in range(2):
        sys.setprofile(count)
        try:
            view.viewport().grab()
        finally:
            sys.setprofile(None)
        top, bottom = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
        cells = (bottom - top + 1) * view.model().columnCount()
        assert 0 < calls["multiData"] <= cells and calls["data"] == 0, calls
        if paint:  # a repaint formats nothing again
            assert calls["formatting"] == 0, calls
        calls.clear()
    assert view.model().index(0, 2).data() == magnitude(many.intermediates[0].max_abs)


def test_every_number_reads_whole_in_its_column(panel: ComparePanel,
                                                perturbed_result: Comparison) -> None:
    """Issue 34's screenshots: a max rel of 0.000168 read "0.0…168" in the Outputs table,
    its column sized for "1.23e-05". Every number of either table fits its column."""
    from dataclasses import replace

    values = (0.000168, 8.88e-05, 123456.0, 0.000999, 999.7, 0.00123, 5e-12)
    odd = [replace(d, max_abs=value, max_rel=value, cosine=-0.999123)
           for d, value in zip(perturbed_result.outputs * 7, values, strict=False)]
    assert [magnitude(v) for v in values] == ["1.68e-04", "8.88e-05", "1.2e+05", "9.99e-04",
                                              "1000", "0.00123", "5.00e-12"]
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(replace(perturbed_result, outputs=odd, intermediates=odd))
    for table in (panel.outputs_table(), panel.intermediates_table()):
        metrics, model = table.fontMetrics(), table.model()
        for column in (2, 3, 4):
            room = table.columnWidth(column) - delegate_text_padding(table)
            for row in range(model.rowCount()):
                text = str(model.index(row, column).data())
                assert metrics.horizontalAdvance(text) <= room, (column, text)
