"""Run-inspection panels in a wide, short bottom dock and in a narrow side dock.

Each panel sits in a scroll area like the window's docks (`panels._scrolled`): wide, the
controls make a fixed column on the left and the results take the rest of the width and
the height; narrow, everything stacks as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.open import load_model
from onnxstudio.runner.compare import Comparison, compare, parse_config
from onnxstudio.runner.intermediates import capture
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import ProfileResult, profile
from onnxstudio.ui.insight import compare_form, profile_panel, tensor_view
from onnxstudio.ui.insight.compare_panel import ComparePanel
from onnxstudio.ui.insight.profile_panel import ProfilePanel
from onnxstudio.ui.insight.tensor_dock import TensorDock
from onnxstudio.ui.widgets.responsive import BREAKPOINT, SIDE_WIDTH, SideBySide
from tests.conftest import REPO

SAMPLE = REPO / "resources" / "sample" / "digits_cnn.onnx"
ACTIVATION = "/features/relu1/Relu_output_0"
WIDE, NARROW = (1400, 400), (380, 800)
STACKED = (700, 400)  # as short as WIDE, too narrow to go side by side
SHORT = (1400, 260)  # a bottom dock pulled down low


@pytest.fixture(scope="module")
def profiled() -> ProfileResult:
    return profile(RunRequest(SAMPLE, random=True), runs=3)


@pytest.fixture(scope="module")
def compared() -> Comparison:
    return compare(RunRequest(SAMPLE, random=True), parse_config("ort:cpu:all"),
                   parse_config("ort:cpu:disabled"))


@pytest.fixture(scope="module")
def activation() -> np.ndarray:
    return capture(RunRequest(SAMPLE, random=True), [ACTIVATION]).values[ACTIVATION]


def _settle() -> None:
    # A change of arrangement climbs the widget tree one posted layout request at a time.
    for _ in range(20):
        QApplication.processEvents()


def _docked(qtbot, panel: QWidget) -> QScrollArea:
    """The panel as the window docks it: in a resizable, frameless scroll area."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(panel)
    qtbot.addWidget(area)
    area.show()
    return area


def _resize(area: QScrollArea, size: tuple[int, int]) -> None:
    area.resize(*size)
    _settle()


def _rect(widget: QWidget, panel: QWidget) -> QRect:
    return QRect(widget.mapTo(panel, QPoint(0, 0)), widget.size())


def _profile(qtbot, result: ProfileResult) -> tuple[QScrollArea, ProfilePanel]:
    panel = ProfilePanel()
    area = _docked(qtbot, panel)
    panel.set_model(SAMPLE)
    panel.set_result(result)
    return area, panel


def _compare(qtbot, result: Comparison) -> tuple[QScrollArea, ComparePanel]:
    panel = ComparePanel()
    area = _docked(qtbot, panel)
    panel.set_model(SAMPLE, load_model(SAMPLE))
    panel.set_result(result)
    return area, panel


def _tensor(qtbot, array: np.ndarray) -> tuple[QScrollArea, TensorDock]:
    dock = TensorDock()
    area = _docked(qtbot, dock)
    dock.set_node("Relu (n2)", [ACTIVATION])
    dock.show_tensor(ACTIVATION, array)
    return area, dock


# ------------------------------------------------------------------ the widget itself
def _plain() -> tuple[SideBySide, QWidget, QTableWidget]:
    side = QWidget()
    lay = QVBoxLayout(side)
    for text in ("One", "Two", "Three", "Four"):
        lay.addWidget(QPushButton(text))
    label = QLabel("a label long enough to wrap in a narrow column " * 4)
    label.setWordWrap(True)
    lay.addWidget(label)
    main = QTableWidget(50, 4)
    return SideBySide(side, main), side, main


def test_side_by_side_switches_at_the_breakpoint(qtbot) -> None:
    box, side, main = _plain()
    qtbot.addWidget(box)
    seen: list[bool] = []
    box.arranged.connect(seen.append)
    box.resize(*NARROW)
    box.show()
    _settle()
    assert not box.wide()
    assert _rect(main, box).top() >= _rect(side, box).bottom()

    box.resize(*WIDE)
    _settle()
    assert box.wide() and seen == [True]
    assert box.side_area().width() == SIDE_WIDTH
    assert _rect(main, box).left() > _rect(side, box).right()
    assert main.height() == box.height()  # all of it, the side column scrolls on its own
    assert not box.hasHeightForWidth()

    box.resize(BREAKPOINT - 1, 400)
    _settle()
    assert not box.wide() and seen == [True, False]
    assert box.side_widget() is side and box.main_widget() is main
    assert side.isVisibleTo(box) and main.isVisibleTo(box)


# ------------------------------------------------------------------ the three panels
def test_profile_tables_beside_the_controls_when_wide(qtbot, profiled: ProfileResult) -> None:
    area, panel = _profile(qtbot, profiled)
    table = panel.node_table()
    _resize(area, STACKED)
    assert not panel.layout_switch.wide()
    stacked = table.height()

    _resize(area, WIDE)
    assert panel.layout_switch.wide()
    controls = _rect(panel.profile_button, panel)
    assert _rect(table, panel).left() > controls.right()
    assert _rect(panel.summary_label, panel).right() < _rect(table, panel).left()
    assert table.height() > stacked
    assert panel.minimumSizeHint().height() <= 250
    _resize(area, SHORT)
    assert panel.height() == area.viewport().height()  # the tables shrink, nothing scrolls
    _resize(area, WIDE)
    assert panel.optimization_combo.width() <= profile_panel.COMBO_CAP
    assert panel.runs_spin.width() <= profile_panel.SPIN_CAP
    assert panel.filter_edit.width() <= profile_panel.FILTER_CAP

    _resize(area, NARROW)
    assert not panel.layout_switch.wide()
    assert _rect(table, panel).top() > _rect(panel.summary_label, panel).bottom()
    assert panel.optimization_combo.width() <= profile_panel.COMBO_CAP


def test_compare_tables_beside_the_verdict_when_wide(qtbot, compared: Comparison) -> None:
    area, panel = _compare(qtbot, compared)
    table = panel.intermediates_table()
    _resize(area, STACKED)
    assert not panel.layout_switch.wide()
    stacked = table.height()

    _resize(area, WIDE)
    assert panel.layout_switch.wide()
    assert _rect(table, panel).left() > _rect(panel.jump_button, panel).right()
    assert _rect(panel.outputs_table(), panel).left() > _rect(panel.form.a_combo, panel).right()
    assert table.height() > stacked
    assert panel.minimumSizeHint().height() <= 250
    _resize(area, SHORT)
    assert panel.height() == area.viewport().height()
    _resize(area, WIDE)
    assert panel.form.a_combo.width() <= compare_form.COMBO_CAP
    assert panel.form.tolerance_edit.width() <= compare_form.TOLERANCE_CAP

    _resize(area, NARROW)
    assert not panel.layout_switch.wide()
    assert _rect(panel.outputs_table(), panel).top() > _rect(panel.jump_button, panel).bottom()
    assert panel.jump_button.isVisibleTo(panel) and panel.form.colour_check.isVisibleTo(panel)


def test_compare_without_a_result_explains_itself_in_either_arrangement(qtbot) -> None:
    panel = ComparePanel()
    area = _docked(qtbot, panel)
    for size in (WIDE, NARROW):
        _resize(area, size)
        assert panel.hint.isVisibleTo(panel) and not panel.results.isVisibleTo(panel)
        assert not panel.verdict_box.isVisibleTo(panel)
    assert _rect(panel.hint, panel).top() > _rect(panel.form.compare_button, panel).bottom()


def test_tensor_values_beside_the_statistics_when_wide(qtbot, activation: np.ndarray) -> None:
    area, dock = _tensor(qtbot, activation)
    view = dock.view
    _resize(area, STACKED)
    assert not view.layout_switch.wide()
    stacked = view.tabs.height()

    _resize(area, WIDE)
    assert view.layout_switch.wide()
    assert _rect(view.tabs, dock).left() > _rect(view.histogram, dock).right()
    assert view.tabs.height() > stacked
    assert dock.minimumSizeHint().height() <= 250
    _resize(area, SHORT)
    assert dock.height() == area.viewport().height()
    _resize(area, WIDE)
    assert all(spin.width() <= tensor_view.SPIN_CAP for spin in view.index_spins())
    np.testing.assert_array_equal(view.current_array(), activation)

    _resize(area, NARROW)
    assert not view.layout_switch.wide()
    assert _rect(view.tabs, dock).top() > _rect(view.histogram, dock).bottom()
    assert all(spin.width() <= tensor_view.SPIN_CAP for spin in view.index_spins())


def test_empty_tensor_dock_stays_short(qtbot) -> None:
    dock = TensorDock()
    area = _docked(qtbot, dock)
    _resize(area, (WIDE[0], 200))
    assert dock.view.placeholder_text()
    assert dock.height() == area.viewport().height()


def test_feature_maps_wrap_to_the_wide_column(qtbot, activation: np.ndarray) -> None:
    area, dock = _tensor(qtbot, activation)
    view = dock.view
    _resize(area, WIDE)
    view.tabs.setCurrentIndex(view.maps_tab)
    _settle()
    grid = view.grid_image()
    assert grid is not None
    assert grid.width() <= view.maps.grid_scroll.viewport().width()


def test_narrow_docks_keep_todays_order(qtbot) -> None:
    """Stacked, the controls come first and nothing is wider than the dock."""
    panel = ProfilePanel()
    area = _docked(qtbot, panel)
    _resize(area, NARROW)
    assert panel.width() <= NARROW[0]
    assert _rect(panel.stack, panel).top() > _rect(panel.heatmap_check, panel).bottom()
