"""The profile panel with real onnxruntime profiles: what the tables show, sort, filter, export."""

from __future__ import annotations

import csv
import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QFileDialog, QTableView

from onnxstudio.model import load_model
from onnxstudio.model.formatting import format_ms
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import KernelTime, NodeTime, ProfileResult, profile
from onnxstudio.ui.insight.profile_panel import ProfileOptions, ProfilePanel
from onnxstudio.ui.insight.profile_tables import ID_ROLE, SORT_ROLE
from onnxstudio.ui.widgets import release
from tests.conftest import REPO, shared_model

SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"
MODELS = {
    "sample": lambda: SAMPLE,
    "squeezenet": lambda: shared_model("zoo/onnx_light/light_squeezenet.onnx"),
}
TIME, SHARE = 2, 3


@pytest.fixture(scope="module", params=sorted(MODELS))
def profiled(request: pytest.FixtureRequest) -> tuple[Path, ProfileResult]:
    """One real profile per model for the whole module (profiling is the slow part)."""
    model = MODELS[request.param]()
    return model, profile(RunRequest(model, random=True), runs=3)


@pytest.fixture(scope="module")
def sample_result() -> ProfileResult:
    return profile(RunRequest(SAMPLE, random=True), runs=3)


def _panel(qtbot, model: Path | None = None, result: ProfileResult | None = None
           ) -> ProfilePanel:
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    panel.resize(400, 800)
    panel.show()
    if model is not None:
        panel.set_model(model, load_model(model))
    if result is not None:
        panel.set_result(result)
    return panel


@pytest.fixture
def shown(qtbot, profiled: tuple[Path, ProfileResult]) -> Iterator[ProfilePanel]:
    model, result = profiled
    yield _panel(qtbot, model, result)


def cells(view: QTableView, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> list:
    m = view.model()
    return [m.index(r, column).data(role) for r in range(m.rowCount())]


def node_ids(view: QTableView) -> list[str]:
    return [str(i) for i in cells(view, 0, ID_ROLE)]


def graph_nodes(model: Path) -> list[onnx.NodeProto]:
    return list(onnx.load(str(model), load_external_data=False).graph.node)


def click_header(qtbot, view: QTableView, column: int) -> None:
    header = view.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(x, header.height() // 2))


def row_point(view: QTableView, row: int) -> QPoint:
    return view.visualRect(view.model().index(row, 0)).center()


def double_click(qtbot, view: QTableView, row: int) -> None:
    """A real double-click: the first click's press/release, then the double-click event.

    (QTest's mouseDClick alone lacks the first click, which item views need to see.)
    """
    pos = row_point(view, row)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_rows_are_the_models_nodes_slowest_first(shown: ProfilePanel,
                                                 profiled: tuple[Path, ProfileResult]) -> None:
    model, result = profiled
    nodes = graph_nodes(model)
    view = shown.node_table()
    assert view.isVisible()
    ids = node_ids(view)
    names, ops = cells(view, 0), cells(view, 1)
    mapped = [i for i, node_id in enumerate(ids) if node_id]
    assert len(mapped) == len(result.nodes) > 0
    for row in mapped:
        node = nodes[int(ids[row][1:])]
        assert names[row] == (node.name or ids[row])
        assert ops[row] == node.op_type
    # Unmapped kernels come last, without an id, in grey italics.
    assert len(ids) - len(mapped) == len(result.unmapped)
    assert mapped == list(range(len(mapped)))
    for row in range(len(mapped), len(ids)):
        index = view.model().index(row, 0)
        assert index.data(Qt.ItemDataRole.FontRole).italic()
        assert names[row] in {k.name for k in result.unmapped}
    times = cells(view, TIME, SORT_ROLE)[: len(mapped)]
    assert times == sorted(times, reverse=True)
    summary = shown.summary_text()
    assert f"{len(result.nodes)} nodes timed" in summary
    assert "mean of 3" in summary and "optimisation all" in summary
    assert "provider CPU" in summary
    assert ("onnxruntime added" in summary) == bool(result.unmapped)


def test_clicking_the_time_header_sorts_smallest_then_largest_first(
        qtbot, shown: ProfilePanel) -> None:
    view = shown.node_table()
    n = sum(1 for i in node_ids(view) if i)

    def times() -> list[float]:
        return cells(view, TIME, SORT_ROLE)[:n]

    click_header(qtbot, view, TIME)
    assert times() == sorted(times())
    assert times()[0] == min(times())
    assert all(node_ids(view)[:n])  # unmapped kernels still at the end
    click_header(qtbot, view, TIME)
    assert times() == sorted(times(), reverse=True)
    assert cells(view, TIME)[0] == format_ms(max(times()))


def test_shares_add_up_to_the_whole(shown: ProfilePanel) -> None:
    for view in (shown.node_table(), shown.op_table()):
        shown_shares = [float(s) for s in cells(view, SHARE)]
        # each displayed share is rounded to 0.1 %
        assert sum(shown_shares) == pytest.approx(100.0, abs=0.05 * len(shown_shares) + 0.01)
        assert sum(cells(view, SHARE, SORT_ROLE)) == pytest.approx(1.0)


def test_a_large_models_small_shares_read_as_numbers_not_zero(qtbot) -> None:
    """Among 20,000 nodes each takes 0.005 % (dag100k's slowest: 0.02 %): one decimal
    showed "0.0" on every row."""
    nodes = [NodeTime(i, f"n{i}", "Relu", 0.01 + 0.02 * (i == 0)) for i in range(20_000)]
    result = ProfileResult(SAMPLE, "random inputs", "all", "CPUExecutionProvider", 1,
                           250.0, nodes, [])
    view = _panel(qtbot, result=result).node_table()
    shares = cells(view, SHARE)
    assert shares[0] == "0.015" and set(shares[1:]) == {"0.0050"}


def test_operator_type_totals_equal_the_node_totals(shown: ProfilePanel) -> None:
    nodes, ops = shown.node_table(), shown.op_table()
    node_ops, node_times = cells(nodes, 1), cells(nodes, TIME, SORT_ROLE)
    op_names, counts = cells(ops, 0), [int(c) for c in cells(ops, 1)]
    op_times = cells(ops, TIME, SORT_ROLE)
    assert sorted(op_names) == sorted(set(node_ops))
    for op, count, t in zip(op_names, counts, op_times, strict=True):
        assert count == node_ops.count(op)
        assert t == pytest.approx(sum(x for o, x in zip(node_ops, node_times, strict=True)
                                      if o == op))
    assert sum(op_times) == pytest.approx(sum(node_times))
    assert op_times == sorted(op_times, reverse=True)


def test_filter_hides_rows_that_do_not_match(qtbot, shown: ProfilePanel) -> None:
    view = shown.node_table()
    everything = view.model().rowCount()
    qtbot.keyClicks(shown.filter_edit, "conv")
    visible = view.model().rowCount()
    assert 0 < visible < everything
    for name, op, node_id in zip(cells(view, 0), cells(view, 1), node_ids(view), strict=True):
        assert "conv" in f"{name} {op} {node_id}".lower()
    assert cells(shown.op_table(), 0) == ["Conv"]
    shown.filter_edit.setText("no-such-node-anywhere")
    assert view.model().rowCount() == 0
    shown.filter_edit.clear()
    assert view.model().rowCount() == everything


def test_double_click_and_enter_activate_that_node(qtbot, shown: ProfilePanel,
                                                    profiled: tuple[Path, ProfileResult]
                                                    ) -> None:
    model, _ = profiled
    nodes = graph_nodes(model)
    view = shown.node_table()
    row = 1
    name = cells(view, 0)[row]
    with qtbot.waitSignal(shown.nodeActivated, timeout=2000) as blocker:
        double_click(qtbot, view, row)
    node_id = blocker.args[0]
    assert node_id == node_ids(view)[row]
    assert (nodes[int(node_id[1:])].name or node_id) == name

    view.setFocus()
    with qtbot.waitSignal(shown.nodeSelected, timeout=2000) as selected:
        view.selectRow(0)
    assert selected.args == [node_ids(view)[0]]
    with qtbot.waitSignal(shown.nodeActivated, timeout=2000) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert blocker.args == [node_ids(view)[0]]


def test_unmapped_kernel_rows_activate_nothing(qtbot, profiled: tuple[Path, ProfileResult]
                                               ) -> None:
    model, result = profiled
    if not result.unmapped:  # every kernel is credited now: give it one we could not place
        result = dataclasses.replace(result, unmapped=[KernelTime("Memcpy", "MemcpyToHost", 0.0)],
                                     derived={})
    shown = _panel(qtbot, model, result)
    view = shown.node_table()
    last = view.model().rowCount() - 1
    assert node_ids(view)[last] == ""
    with qtbot.assertNotEmitted(shown.nodeActivated, wait=100):
        double_click(qtbot, view, last)


def test_fused_column_names_the_covered_nodes(shown: ProfilePanel,
                                              profiled: tuple[Path, ProfileResult]) -> None:
    model, result = profiled
    nodes = graph_nodes(model)
    view = shown.node_table()
    fused = dict(zip(node_ids(view), cells(view, 4), strict=True))
    covering = [n for n in result.nodes if n.covers]
    if not covering:
        pytest.skip("onnxruntime fused nothing in this model")
    for n in covering:
        assert fused[n.id] == ", ".join(nodes[i].name or f"n{i}" for i in n.covers)
    tip = view.model().index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    first = result.nodes[0] if node_ids(view)[0] == result.nodes[0].id else None
    assert first is not None
    assert all(k in tip for k in first.kernels)
    assert first.provider in tip


def test_export_csv_writes_the_table(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                     sample_result: ProfileResult) -> None:
    panel = _panel(qtbot, SAMPLE)
    assert not panel.export_button.isEnabled()
    panel.set_result(sample_result)
    assert panel.export_button.isEnabled()
    asked: list[str] = []
    target = tmp_path / "times.csv"

    def save_name(_parent: object, _caption: str, default: str, _filter: str
                  ) -> tuple[str, str]:
        asked.append(default)
        return str(target), "CSV files (*.csv)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_name)
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    assert Path(asked[0]).name == "digits_cnn-profile.csv"
    with open(target, newline="") as f:
        rows = list(csv.DictReader(f))
    view = panel.node_table()
    assert [r["id"] for r in rows] == node_ids(view)
    assert [r["name"] or r["id"] for r in rows] == cells(view, 0)
    assert [r["op_type"] for r in rows] == cells(view, 1)
    assert [float(r["time_ms"]) for r in rows] == pytest.approx(cells(view, TIME, SORT_ROLE),
                                                                abs=1e-6)
    assert not list(tmp_path.glob(".*tmp*"))  # the temporary file was renamed, not left


def test_export_failure_shows_a_banner(qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       sample_result: ProfileResult) -> None:
    panel = _panel(qtbot, SAMPLE, sample_result)
    target = tmp_path / "missing-folder" / "times.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *_args: (str(target), ""))
    assert panel.error_text() == ""
    qtbot.mouseClick(panel.export_button, Qt.MouseButton.LeftButton)
    assert not target.exists()
    assert panel.banner.isVisible()
    assert "missing-folder" in panel.error_text()
    qtbot.mouseClick(panel.banner.close_button, Qt.MouseButton.LeftButton)
    assert panel.error_text() == ""
    assert panel.node_table().model().rowCount() > 0  # the result stays


def test_profile_button_sends_the_chosen_options(qtbot) -> None:
    panel = _panel(qtbot)
    assert not panel.profile_button.isEnabled()  # no model yet
    panel.set_model(SAMPLE)
    assert panel.profile_button.isEnabled()
    assert panel.options() == ProfileOptions("all", 10, 1)
    panel.optimization_combo.setCurrentText("basic")
    panel.runs_spin.setValue(7)
    panel.warmup_spin.setValue(3)
    with qtbot.waitSignal(panel.profileRequested, timeout=2000) as blocker:
        qtbot.mouseClick(panel.profile_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [ProfileOptions("basic", 7, 3)]

    panel.set_busy(True, "Profiling 7 runs…")
    assert panel.job.progress.isVisible()
    assert panel.job.status_label.text() == "Profiling 7 runs…"
    assert not panel.profile_button.isEnabled()
    with qtbot.assertNotEmitted(panel.profileRequested, wait=50):
        panel.profile_button.click()
    panel.set_busy(False)
    assert not panel.job.progress.isVisible()
    assert panel.profile_button.isEnabled()


def test_choices_are_restored_in_a_new_panel(qtbot) -> None:
    first = _panel(qtbot, SAMPLE)
    first.optimization_combo.setCurrentText("disable")
    first.runs_spin.setValue(42)
    first.warmup_spin.setValue(0)
    with qtbot.waitSignal(first.heatmapToggled, timeout=2000) as toggled:
        first.heatmap_check.click()
    assert toggled.args == [False]
    second = _panel(qtbot, SAMPLE)
    assert second.options() == ProfileOptions("disable", 42, 0)
    assert not second.heatmap_enabled()


def test_new_model_clears_the_result_and_explains_the_input(
        qtbot, sample_result: ProfileResult) -> None:
    panel = _panel(qtbot, SAMPLE, sample_result)
    assert panel.result() is sample_result
    assert panel.node_table().isVisible()
    panel.set_model(SAMPLE.with_name("other.onnx"))
    assert panel.result() is None
    assert not panel.node_table().isVisible()
    assert panel.empty_label.isVisible()
    assert "Profile run" in panel.empty_label.text()
    assert "random inputs" in panel.empty_label.text()
    assert not panel.export_button.isEnabled()
    assert panel.summary_text() == ""


def test_panel_fits_a_narrow_dock(qtbot, sample_result: ProfileResult) -> None:
    panel = _panel(qtbot, SAMPLE, sample_result)
    panel.show_error("x" * 300 + " a very long message about a path that must wrap")
    assert panel.minimumSizeHint().width() <= 380
    panel.resize(380, 700)
    view = panel.node_table()
    # the name column keeps a legible width; the table scrolls rather than squeezing it
    assert view.columnWidth(0) >= 100


def test_operator_table_fits_its_columns_when_its_tab_is_shown(shown: ProfilePanel) -> None:
    """The hidden tab's table is measured when shown, as if it had been visible all along:
    every number whole, no column wider than its widest text or header."""
    view = shown.op_table()
    assert not view.isVisible()
    shown.tabs.setCurrentWidget(view)
    assert view.isVisible()
    header = view.horizontalHeader()
    widths = [header.sectionSize(c) for c in range(header.count())]
    view.fit_columns()
    assert [header.sectionSize(c) for c in range(header.count())] == widths
    metrics = view.fontMetrics()
    for column in (1, TIME):  # node counts, milliseconds
        widest = max(metrics.horizontalAdvance(str(text)) for text in cells(view, column)[:24])
        assert view.columnWidth(column) > widest, column


def test_node_names_keep_their_layer_number_when_elided(qtbot) -> None:
    """"…/layer.3/…/MatMul", not "…ion/self/MatMul" on every layer's row alike."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QStyleOptionViewItem

    from onnxstudio.model.formatting import elide_path
    from onnxstudio.ui.insight.profile_panel import ProfilePanel

    name = "/bert/encoder/layer.3/attention/self/MatMul"
    assert elide_path(name, lambda t: len(t) <= 18) == "…/layer.3/…/MatMul"
    panel = ProfilePanel()
    qtbot.addWidget(panel)
    model = QStandardItemModel(1, 1)
    model.setItem(0, 0, QStandardItem(name))
    option = QStyleOptionViewItem()
    option.rect = QRect(0, 0, panel.fontMetrics().horizontalAdvance("…/layer.3/…/MatMul") + 14,
                        20)
    option.fontMetrics = panel.fontMetrics()
    panel.node_names.initStyleOption(option, model.index(0, 0))
    assert "layer.3" in option.text and option.text.endswith("/MatMul")


def test_a_huge_graph_profiles_fewer_runs_and_says_how_many_were_recorded(
        qtbot, monkeypatch: pytest.MonkeyPatch, sample_result: ProfileResult) -> None:
    """dag100k's 10 default runs took 260 s and read "mean of 9" (the profiler stopped
    recording): a huge graph defaults to 3 runs, and a short trace says so."""
    from dataclasses import replace

    from onnxstudio.ui.insight import profile_panel

    panel = _panel(qtbot)
    monkeypatch.setattr(profile_panel, "HUGE_NODES", 5)  # the sample's 12 nodes: "huge"
    panel.set_model(SAMPLE, load_model(SAMPLE))
    # no "Run … first" beside a Profile button that runs random inputs all the same
    assert "random inputs when nothing ran yet" in panel.empty_label.text()
    assert "first" not in panel.empty_label.text()
    assert panel.options().runs == profile_panel.HUGE_RUNS
    monkeypatch.setattr(profile_panel, "HUGE_NODES", 20_000)
    panel.set_model(SAMPLE, load_model(SAMPLE))
    assert panel.options().runs == 10  # the user's number is back for a small graph
    panel.runs_spin.setValue(4)
    panel._request_profile()
    panel.set_result(replace(sample_result, runs=3))
    assert "mean of 3 of 4 runs" in panel.summary_text()
    assert "recorded 3 of the 4 runs" in panel.summary_text()


def test_a_dropped_large_profile_is_freed_off_the_gui_thread(qtbot) -> None:
    """Clearing a 20,000-node profile (an edit drops it; dag100k has 100k) freed every
    kernel time and table row inside that call: 100-130 ms of the window at once. The
    panel empties at once; its records die on the release thread, a slice at a time."""
    died: list[bool] = []

    @dataclasses.dataclass
    class Tracked(NodeTime):
        def __del__(self) -> None:
            died.append(threading.current_thread() is threading.main_thread())

    nodes = [Tracked(i, f"n{i}", "Relu", 0.01) for i in range(20_000)]
    result = ProfileResult(SAMPLE, "random inputs", "all", "CPUExecutionProvider", 1,
                           250.0, list(nodes), [])
    panel = _panel(qtbot, result=result)
    del nodes, result
    panel.set_result(None)
    assert panel.node_table().model().rowCount() == 0  # the user sees it empty now
    qtbot.waitUntil(lambda: release.pending() == 0 and len(died) == 20_000)
    assert not any(died)


def test_releasing_a_result_still_held_elsewhere_leaves_it_whole(qtbot) -> None:
    nodes = [NodeTime(i, f"n{i}", "Relu", 0.01) for i in range(5_000)]
    result = ProfileResult(SAMPLE, "random inputs", "all", "CPUExecutionProvider", 1,
                           250.0, nodes, [])
    release.release_later(result)
    qtbot.waitUntil(lambda: release.pending() == 0)
    assert result.nodes is nodes and len(nodes) == 5_000 and nodes[-1].name == "n4999"


def test_a_painted_cell_is_one_call_to_the_records(qtbot, sample_result: ProfileResult) -> None:
    """The filter proxy between the table and its records asked their ``data`` once per
    role of every painted cell (seven Python calls a cell); it hands them a cell's
    roles at once, and the cells read as before."""
    import sys
    from collections import Counter
    from types import FrameType

    panel = _panel(qtbot, SAMPLE, sample_result)
    view = panel.node_table()
    qtbot.waitUntil(lambda: view.model().rowCount() > 0)
    calls: Counter[str] = Counter()

    def count(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code.co_name in ("data", "multiData"):
            calls[f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"] += 1

    sys.setprofile(count)
    try:
        view.viewport().grab()
    finally:
        sys.setprofile(None)
    last = view.rowAt(view.viewport().height() - 1)
    rows = view.model().rowCount() if last < 0 else last + 1
    shown = sum(not view.isColumnHidden(c) for c in range(view.model().columnCount()))
    assert 0 < calls["tables.py:multiData"] <= rows * shown, calls
    assert calls["tables.py:data"] <= rows, calls  # only the share bar's length
    assert cells(view, 2) == [format_ms(r.time_ms) for r in panel.node_model.rows]
