"""The profile dock: where one run's time goes, per node and per operator type.

The panel only gathers choices (optimisation level, runs, warm-up), asks for a profile
through `profileRequested`, and shows a `ProfileResult` it is handed; the profiling itself
runs elsewhere on a worker thread, which Cancel (or Escape) stops. Tables are models behind
sort/filter proxies so sorting is numeric and the filter never rebuilds rows. It never
imports onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import (
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import OnnxStudioError
from onnxstudio.export.atomic import atomic_write
from onnxstudio.model.graph import Model
from onnxstudio.runner.profile import ProfileResult, to_csv
from onnxstudio.runner.profile_rows import (
    NBSP,
    summary_lines,
    table_rows,
)
from onnxstudio.runner.session import OPTIMIZATION_LEVELS
from onnxstudio.ui.insight.job_panel import JobPanel
from onnxstudio.ui.insight.profile_tables import (
    ID_ROLE,
    FitTableView,
    NodeTableModel,
    OpTypeTableModel,
    ProfileSortProxy,
    ShareBarDelegate,
)
from onnxstudio.ui.settings import app_settings, store
from onnxstudio.ui.widgets.column_menu import ColumnChooser
from onnxstudio.ui.widgets.path_delegate import PathDelegate, RightElided
from onnxstudio.ui.widgets.release import release_later

NO_MODEL_TEXT = "Open a model, then Profile run to see where the time goes"
EMPTY_TEXT = ("Profile run to see where the time goes: it times the Run panel's last "
              "input, or random inputs when nothing ran yet.")
# Above this many nodes a profiled run takes tens of seconds (dag100k: 26 s), and
# onnxruntime's profiler stops recording at a million events: fewer runs by default.
OP_TYPE_CAP = 96  # the node table's Op type column at most (px), cut at the right
HUGE_NODES = 20_000
HUGE_RUNS = 3
OPTIMIZATION_TIP = (
    "onnxruntime's graph optimisation level for the profiled session.\n"
    "With optimisations on, fused kernels (e.g. Conv + Add + Relu) are credited to the "
    "first node they cover; a row's tooltip lists the others, and so does the Fused column "
    "(right-click the table's header to show it).\n"
    "\"disable\" times every node on its own, one kernel per node.")
SETTINGS_RUNS = "profile/runs"
SETTINGS_WARMUP = "profile/warmup"
SETTINGS_OPTIMIZATION = "profile/optimization"
SETTINGS_HEATMAP = "profile/heatmap"
SETTINGS_EXPORT_DIR = "profile/export_dir"
COMBO_CAP = 180  # widest the optimisation combo gets, however wide the dock
SPIN_CAP = 90  # widest the runs / warm-up spin boxes get
FILTER_CAP = 360


@dataclass(frozen=True)
class ProfileOptions:
    """What the user chose for one profile: session optimisation, measured and warm-up runs."""

    optimization: str
    runs: int
    warmup: int


class ProfilePanel(JobPanel):
    """Dock content: profile controls, a summary and sortable node / op-type tables.

    Narrow (a side dock): everything in one column, tables at the bottom. Wide (docked
    along the bottom of the window): controls and summary on the left, tables on the right.
    """

    profileRequested = Signal(object)  # ProfileOptions
    nodeActivated = Signal(str)  # node id, on double-click or Enter
    nodeSelected = Signal(str)  # node id, when the current node row changes
    heatmapToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ProfilePanel")
        self._model_path: Path | None = None
        self._result: ProfileResult | None = None
        self._requested: ProfileOptions | None = None
        self._model: Model | None = None  # the loaded model: node names for the Fused column
        self._build()
        self._restore_settings()
        self._connect()
        self._update_enabled()

    # ----------------------------------------------------------------- public API
    def set_model(self, path: Path | None, model: Model | None = None) -> None:
        """A new model (or none): its old profile no longer applies. ``model`` is the tab's
        loaded model; the Fused column reads node names from it, never from the file."""
        self._model_path = Path(path) if path else None
        self._model = model
        self._requested = None
        self._fit_runs(model)
        self.set_result(None)
        self.banner.hide()
        self.empty_label.setText(EMPTY_TEXT if self._model_path else NO_MODEL_TEXT)
        self._update_enabled()

    def set_result(self, result: ProfileResult | None) -> None:
        """Show a profile (slowest first), or clear the tables with None."""
        release_later(self._result)  # 100k kernel times: a slice a turn
        self._result = result
        if result is None:
            self.node_model.reset([])
            self.op_model.reset([])
            self.summary_label.clear()
            self.summary_label.hide()
            self.stack.setCurrentIndex(0)
        else:
            self.banner.hide()
            tables = table_rows(result, self._model)  # built by the profile task
            slowest_first = (2, Qt.SortOrder.DescendingOrder)  # as the task built them
            self.node_model.reset(tables.nodes, slowest_first)
            self.op_model.reset(tables.ops, slowest_first)
            self.node_bars.peak, self.op_bars.peak = tables.node_peak, tables.op_peak
            asked = self._requested
            self.summary_label.setText(summary_lines(
                result, asked.warmup if asked else None, asked.runs if asked else None))
            self.summary_label.show()
            for view in (self._node_view, self._op_view):
                view.sortByColumn(*slowest_first)
                view.fit_columns()
                view.scrollToTop()
            self.stack.setCurrentIndex(1)
        self._update_enabled()

    def result(self) -> ProfileResult | None:
        return self._result

    def options(self) -> ProfileOptions:
        return ProfileOptions(self.optimization_combo.currentText(), self.runs_spin.value(),
                              self.warmup_spin.value())

    def heatmap_enabled(self) -> bool:
        return self.heatmap_check.isChecked()

    def node_table(self) -> QTableView:
        return self._node_view

    def op_table(self) -> QTableView:
        return self._op_view

    def summary_text(self) -> str:
        """The summary as shown, with plain spaces."""
        return self.summary_label.text().replace(NBSP, " ")

    def export_csv(self, path: str | Path | None = None) -> Path | None:
        """Write the node table as CSV (asks where unless given); None if nothing written."""
        if self._result is None:
            return None
        if path is None:
            stem = self._model_path.stem if self._model_path else self._result.model.stem
            folder = str(app_settings().value(SETTINGS_EXPORT_DIR, "") or "")
            if not folder or not Path(folder).is_dir():
                folder = str(self._result.model.parent)
            chosen, _ = QFileDialog.getSaveFileName(
                self, "Export profile as CSV", str(Path(folder) / f"{stem}-profile.csv"),
                "CSV files (*.csv);;All files (*)")
            if not chosen:
                return None
            path = chosen
        dest = Path(path)
        if not dest.suffix:
            dest = dest.with_suffix(".csv")
        try:
            atomic_write(dest, to_csv(self._result), protect=[self._result.model])
        except (OnnxStudioError, OSError) as exc:
            self.show_error(f"Could not export the profile: {exc}")
            return None
        store({SETTINGS_EXPORT_DIR: str(dest.parent)})
        self.job.say(f"Saved {dest.name}")
        return dest

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        # Controls and summary on one side, the tables on the other: above them in a side
        # dock, a column to their left in a wide (bottom) dock.
        self.stack = QStackedWidget()
        self.empty_label = QLabel(NO_MODEL_TEXT)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        self.empty_label.setEnabled(False)  # the muted look of other empty panels
        self.empty_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                       QSizePolicy.Policy.Preferred)
        self.empty_label.setContentsMargins(12, 12, 12, 12)
        self.stack.addWidget(self.empty_label)
        self.stack.addWidget(self._build_results())
        self._frame(self._build_controls(), self.stack)

    def _build_controls(self) -> QWidget:
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(0, 0, 0, 0)
        grid = QGridLayout()
        grid.setHorizontalSpacing(6)
        self.optimization_combo = QComboBox()
        self.optimization_combo.addItems(list(OPTIMIZATION_LEVELS))
        self.optimization_combo.setCurrentText("all")
        self.optimization_combo.setToolTip(OPTIMIZATION_TIP)
        self.optimization_combo.setMaximumWidth(COMBO_CAP)
        opt_label = QLabel("Optimisation")
        opt_label.setToolTip(OPTIMIZATION_TIP)
        self.runs_spin = QSpinBox()
        self.runs_spin.setRange(1, 1000)
        self.runs_spin.setValue(10)
        self.runs_spin.setToolTip("Measured runs; the times shown are their mean")
        self.warmup_spin = QSpinBox()
        self.warmup_spin.setRange(0, 100)
        self.warmup_spin.setValue(1)
        self.warmup_spin.setToolTip("Runs before measuring (first-run allocations, caches); "
                                    "not counted")
        for spin in (self.runs_spin, self.warmup_spin):
            spin.setMaximumWidth(SPIN_CAP)
        grid.addWidget(opt_label, 0, 0)
        grid.addWidget(self.optimization_combo, 0, 1, 1, 3)
        grid.addWidget(QLabel("Runs"), 1, 0)
        grid.addWidget(self.runs_spin, 1, 1)
        grid.addWidget(QLabel("Warm-up"), 1, 2)
        grid.addWidget(self.warmup_spin, 1, 3)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        grid.setColumnStretch(4, 1)  # what the capped fields leave, at the right
        lay.addLayout(grid)

        buttons = QHBoxLayout()
        self.profile_button = QPushButton("Profile run")
        self.profile_button.setToolTip("Time the Run panel's last input (random inputs when "
                                       "there was none) with onnxruntime's profiler")
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Save the node table (slowest first) as CSV")
        buttons.addWidget(self.profile_button)
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        lay.addLayout(buttons)
        self.heatmap_check = QCheckBox("Heatmap on canvas")
        self.heatmap_check.setChecked(True)
        self.heatmap_check.setToolTip("Colour the graph's nodes by their share of the time")
        lay.addWidget(self.heatmap_check)

        lay.addWidget(self.job)
        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.summary_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.hide()
        lay.addWidget(self.summary_label)
        return side

    def _build_results(self) -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by name or op type")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setMaximumWidth(FILTER_CAP)
        lay.addWidget(self.filter_edit)

        self.node_model = NodeTableModel()
        self.node_proxy = ProfileSortProxy(self)
        self.node_proxy.setSourceModel(self.node_model)
        self.node_bars = ShareBarDelegate(self)
        # Op type capped (elided at the right): "LayerNormalization" took 124 px of the
        # names' room
        self._node_view = FitTableView(self.node_proxy, self.node_bars, "profile/name_width",
                                       caps={1: OP_TYPE_CAP, 4: 110})
        self.node_names = PathDelegate(self)
        self._node_view.setItemDelegateForColumn(0, self.node_names)
        self._node_view.setItemDelegateForColumn(1, RightElided(self))
        self._node_view.setItemDelegateForColumn(4, self.node_names)  # Fused: names too
        # Fused starts hidden (a row's tooltip names what it covers): its 64 px left the
        # names "…/layer.0/…/MatMul" in a 1280 px window's dock
        self.node_columns = ColumnChooser(self._node_view, "profile/hidden_columns",
                                          hidden=("Fused",))

        self.op_model = OpTypeTableModel()
        self.op_proxy = ProfileSortProxy(self)
        self.op_proxy.setSourceModel(self.op_model)
        self.op_bars = ShareBarDelegate(self)
        self._op_view = FitTableView(self.op_proxy, self.op_bars, "profile/op_type_width",
                                     caps={1: 60})

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._node_view, "Nodes")
        self.tabs.addTab(self._op_view, "Operator types")
        lay.addWidget(self.tabs, 1)
        return page

    def _connect(self) -> None:
        self.profile_button.clicked.connect(self._request_profile)
        self.export_button.clicked.connect(lambda: self.export_csv())
        self.heatmap_check.toggled.connect(self._heatmap_toggled)
        self.filter_edit.textChanged.connect(self._filter)
        self.runs_spin.valueChanged.connect(lambda v: self._save(SETTINGS_RUNS, v))
        self.warmup_spin.valueChanged.connect(lambda v: self._save(SETTINGS_WARMUP, v))
        self.optimization_combo.currentTextChanged.connect(
            lambda t: self._save(SETTINGS_OPTIMIZATION, t))
        self._node_view.activated.connect(self._node_activated)
        selection = self._node_view.selectionModel()
        selection.currentRowChanged.connect(self._node_current_changed)

    # ----------------------------------------------------------------- behaviour
    def _restore_settings(self) -> None:
        s = app_settings()
        try:
            self.runs_spin.setValue(int(str(s.value(SETTINGS_RUNS, 10))))
            self.warmup_spin.setValue(int(str(s.value(SETTINGS_WARMUP, 1))))
        except ValueError:
            pass  # a hand-edited settings file: keep the defaults
        level = str(s.value(SETTINGS_OPTIMIZATION, "all"))
        if level in OPTIMIZATION_LEVELS:
            self.optimization_combo.setCurrentText(level)
        self.heatmap_check.setChecked(str(s.value(SETTINGS_HEATMAP, "true")).lower()
                                      not in ("false", "0"))

    def _fit_runs(self, model: Model | None) -> None:
        """A huge graph profiles ``HUGE_RUNS`` runs unless fewer were chosen (not saved:
        the next small model gets the user's number back)."""
        huge = model is not None and model.memo(
            "node_count_total", model.graph.node_count_total) > HUGE_NODES
        try:
            chosen = int(str(app_settings().value(SETTINGS_RUNS, 10)))
        except ValueError:  # a hand-edited settings file
            chosen = self.runs_spin.value()
        self.runs_spin.blockSignals(True)
        self.runs_spin.setValue(min(chosen, HUGE_RUNS) if huge else chosen)
        self.runs_spin.blockSignals(False)

    @staticmethod
    def _save(key: str, value: object) -> None:
        store({key: value})

    def _request_profile(self) -> None:
        if self.busy or self._model_path is None:
            return
        self._requested = self.options()
        self.profileRequested.emit(self._requested)

    def _heatmap_toggled(self, on: bool) -> None:
        self._save(SETTINGS_HEATMAP, on)
        self.heatmapToggled.emit(on)

    def _filter(self, text: str) -> None:
        for proxy in (self.node_proxy, self.op_proxy):
            proxy.setFilterFixedString(text.strip())

    def _node_activated(self, index: QModelIndex) -> None:
        node_id = str(index.data(ID_ROLE) or "")
        if node_id:
            self.nodeActivated.emit(node_id)

    def _node_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node_id = str(current.data(ID_ROLE) or "") if current.isValid() else ""
        if node_id:
            self.nodeSelected.emit(node_id)

    def _update_enabled(self) -> None:
        self.profile_button.setEnabled(self._model_path is not None and not self.busy)
        self.export_button.setEnabled(self._result is not None)
