"""The profile dock: where one run's time goes, per node and per operator type.

The panel only gathers choices (optimisation level, runs, warm-up), asks for a profile
through `profileRequested`, and shows a `ProfileResult` it is handed; the profiling itself
runs elsewhere on a worker thread. Tables are models behind sort/filter proxies so sorting
is numeric and the filter never rebuilds rows. It never imports onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.errors import OnnxStudioError
from onnxstudio.export.atomic import atomic_write
from onnxstudio.model.load import read_model_proto
from onnxstudio.runner.profile import ProfileResult, to_csv
from onnxstudio.runner.session import OPTIMIZATION_LEVELS
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.widgets.banner import ErrorBanner
from onnxstudio.ui.widgets.responsive import SideBySide

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # numbers for numeric columns, folded text else
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2  # what the filter box matches (name, id, op)
ID_ROLE = Qt.ItemDataRole.UserRole + 3  # node id ("n12"), "" for unmapped kernels
UNMAPPED_ROLE = Qt.ItemDataRole.UserRole + 4
RESIZE_ROWS = 64  # rows measured when fitting a column to its contents

NO_MODEL_TEXT = "Open a model, then Profile run to see where the time goes"
EMPTY_TEXT = ("Run or drop an input in the Run panel first, then Profile run to see where "
              "the time goes.\n\nThe profile times the Run panel's last input "
              "(random inputs when there was none).")
OPTIMIZATION_TIP = (
    "onnxruntime's graph optimisation level for the profiled session.\n"
    "With optimisations on, fused kernels (e.g. Conv + Add + Relu) are credited to the "
    "first node they cover; the Fused column lists the others.\n"
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


def format_ms(ms: float) -> str:
    """Three significant-ish digits: 123 / 12.4 / 1.24 / 0.124 ms."""
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def _provider_name(provider: str) -> str:
    return provider.removesuffix("ExecutionProvider") or provider or "?"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass
class _NodeRow:
    node_id: str  # "" for a kernel onnxruntime added
    label: str  # node name, its id when unnamed, the kernel name when unmapped
    op_type: str
    time_ms: float
    share: float  # 0..1 of the kernel time
    fused: str
    tooltip: str
    unmapped: bool


@dataclass
class _OpRow:
    op_type: str
    count: int
    time_ms: float
    share: float


class _Table(QAbstractTableModel):
    """Rows of plain records; subclasses say how a column displays and sorts."""

    # Units on a second header line keep numeric columns narrow in a ~380 px dock.
    headers: tuple[str, ...] = ()
    numeric: frozenset[int] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Any] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._align(section)  # headers line up with their cells
        return None

    def reset(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows themselves, in Python: a proxy's C++ sort calls back into Python
        twice per comparison, which froze the window for seconds on 8k rows. Kernels no
        node accounts for stay below the nodes in either order."""
        if not 0 <= column < len(self.headers):
            return
        keys = [(bool(self.data(i, UNMAPPED_ROLE)), self.data(i, SORT_ROLE))
                for i in (self.index(r, column) for r in range(len(self.rows)))]
        try:
            order_ = sorted(range(len(keys)), key=lambda r: keys[r][1],
                            reverse=order == Qt.SortOrder.DescendingOrder)
        except TypeError:
            order_ = sorted(range(len(keys)), key=lambda r: str(keys[r][1]),
                            reverse=order == Qt.SortOrder.DescendingOrder)
        order_.sort(key=lambda r: keys[r][0])  # stable: unmapped rows last
        self.layoutAboutToBeChanged.emit()
        moved = {old: new for new, old in enumerate(order_)}
        before = self.persistentIndexList()
        self.rows = [self.rows[r] for r in order_]
        self.changePersistentIndexList(
            before, [self.index(moved[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()

    def _align(self, column: int) -> int:
        if column in self.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


class NodeTableModel(_Table):
    """One row per timed node (slowest first), then the kernels no node accounts for."""

    headers = ("Node", "Op type", "Time\n(ms)", "Share\n(%)", "Fused")
    numeric = frozenset({2, 3})
    rows: list[_NodeRow]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (row.label, row.op_type, format_ms(row.time_ms), f"{row.share * 100:.1f}",
                    row.fused)[col]
        if role == SORT_ROLE:
            return (row.label.casefold(), row.op_type.casefold(), row.time_ms, row.share,
                    row.fused.casefold())[col]
        if role == FILTER_ROLE:
            return f"{row.label} {row.node_id} {row.op_type}"
        if role == ID_ROLE:
            return row.node_id
        if role == UNMAPPED_ROLE:
            return row.unmapped
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._align(col)
        if role == Qt.ItemDataRole.FontRole and row.unmapped:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and row.unmapped:
            return QBrush(QColor(128, 128, 128))
        return None


class OpTypeTableModel(_Table):
    """Totals per operator type (unmapped kernels included, under their own type)."""

    headers = ("Op type", "Nodes", "Time\n(ms)", "Share\n(%)")
    numeric = frozenset({1, 2, 3})
    rows: list[_OpRow]

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (row.op_type, str(row.count), format_ms(row.time_ms),
                    f"{row.share * 100:.1f}")[col]
        if role == SORT_ROLE:
            return (row.op_type.casefold(), row.count, row.time_ms, row.share)[col]
        if role == FILTER_ROLE:
            return row.op_type
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._align(col)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{row.op_type}: {_plural(row.count, 'node')}, {format_ms(row.time_ms)} ms"
        return None


class ProfileSortProxy(QSortFilterProxyModel):
    """Filters rows; sorting is the source table's own (see ``_Table.sort``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(0)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)


class ShareBarDelegate(QStyledItemDelegate):
    """The share as a bar behind its number, longest for the largest share in the table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.peak = 1.0  # largest share in the table; set when a result arrives

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:  # background / selection only
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        share = index.data(SORT_ROLE)
        rect: QRect = opt.rect.adjusted(3, 3, -3, -3)
        palette: QPalette = opt.palette
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        painter.save()
        if isinstance(share, float) and share > 0 and self.peak > 0:
            width = max(1, round(rect.width() * min(1.0, share / self.peak)))
            # On a selected (highlight-coloured) row the bar takes the text colour instead.
            bar = QColor(palette.color(QPalette.ColorRole.HighlightedText if selected
                                       else QPalette.ColorRole.Highlight))
            bar.setAlpha(90)
            painter.fillRect(QRect(rect.left(), rect.top(), width, rect.height()), bar)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.setPen(palette.color(role))
        painter.setFont(opt.font)
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                         text)
        painter.restore()


class FitTableView(QTableView):
    """A read-only, row-selecting table whose first (name) column takes the spare width.

    The other columns fit their contents (capped, so one long fused list cannot take the
    dock); the first keeps a legible minimum and the table scrolls sideways below that.
    """

    FIRST_MIN = 140
    SHARE_WIDTH = 64

    def __init__(self, proxy: QSortFilterProxyModel, bars: ShareBarDelegate,
                 share_column: int = 3, caps: dict[int, int] | None = None) -> None:
        super().__init__()
        self.share_column = share_column
        self.caps = caps or {}
        self._first_min = self.FIRST_MIN
        self.setModel(proxy)
        self.setItemDelegateForColumn(share_column, bars)
        self.setSortingEnabled(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        # scoped names lose their common start: "…/layer.3/attention/MatMul"
        self.setTextElideMode(Qt.TextElideMode.ElideLeft)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setHighlightSections(False)
        self.sortByColumn(2, Qt.SortOrder.DescendingOrder)

    def _content_width(self, column: int) -> int:
        """Widest of the first rows shown (the slowest): measuring thousands of rows, as
        ``sizeHintForColumn`` does, froze the window for seconds."""
        model = self.model()
        rows = min(model.rowCount(), RESIZE_ROWS)
        return max((self.sizeHintForIndex(model.index(r, column)).width()
                    for r in range(rows)), default=0)

    def fit_columns(self) -> None:
        """Measure the columns after the rows changed; the first column is set on resize."""
        header = self.horizontalHeader()
        for col in range(1, header.count()):
            # The header's hint already leaves room for the sort arrow.
            width = max(header.sectionSizeHint(col), self._content_width(col))
            if col == self.share_column:
                width = max(self.SHARE_WIDTH, header.sectionSizeHint(col))
            header.resizeSection(col, min(width, self.caps.get(col, width)))
        # Short names ("n62") need no 140 px: then Fused gets the room instead.
        self._first_min = min(self.FIRST_MIN, max(header.sectionSizeHint(0),
                                                  self._content_width(0)))
        self._fit_first()

    def _fit_first(self) -> None:
        header = self.horizontalHeader()
        if header.count() == 0:
            return
        rest = sum(header.sectionSize(c) for c in range(1, header.count()))
        header.resizeSection(0, max(self._first_min, self.viewport().width() - rest))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_first()


def _node_rows(result: ProfileResult, names: dict[int, str]) -> list[_NodeRow]:
    whole = result.kernel_ms or 1.0
    rows = []
    for n in result.nodes:
        fused = ", ".join(names.get(i) or f"n{i}" for i in n.covers)
        tip = [f"{n.name or '(unnamed)'} · id {n.id} · {n.op_type}",
               f"Kernels: {', '.join(n.kernels) or '—'}",
               f"Provider: {n.provider or result.provider}"]
        if fused:
            tip.append(f"Also covers: {fused}")
        rows.append(_NodeRow(n.id, n.name or n.id, n.op_type, n.time_ms, n.time_ms / whole,
                             fused, "\n".join(tip), False))
    for k in result.unmapped:
        note = (f"Kernel {k.name} ({k.op_type}) was added by onnxruntime; "
                "it is not a node of the model")
        rows.append(_NodeRow("", k.name, k.op_type, k.time_ms, k.time_ms / whole, "", note,
                             True))
    return rows


NBSP = "\u00a0"


def summary_lines(result: ProfileResult, warmup: int | None) -> str:
    """The one-glance figures above the tables (plain text, one line per thought).

    Each "·" part is held together with no-break spaces, so a narrow dock wraps
    between figures, never between a number and its unit.
    """
    after = f", after {warmup} warm-up" if warmup is not None else ""
    parts = [f"{format_ms(result.total_ms)} ms per run (mean of {result.runs}{after})",
             f"kernels {format_ms(result.kernel_ms)} ms",
             f"{_plural(len(result.nodes), 'node')} timed",
             f"provider {_provider_name(result.provider)}",
             f"optimisation {result.optimization}"]
    lines = [f"{NBSP}· ".join(part.replace(" ", NBSP) for part in parts)]
    if result.unmapped:
        extra = sum(k.time_ms for k in result.unmapped)
        lines.append(f"{format_ms(extra)} ms in {_plural(len(result.unmapped), 'kernel')} "
                     "onnxruntime added (not in the model)")
    if result.source:
        lines.append(f"Input: {result.source}")
    return "\n".join(lines)


class ProfilePanel(QWidget):
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
        self._busy = False
        self._requested: ProfileOptions | None = None
        self._names: dict[int, str] = {}  # node index -> name, for the Fused column
        self._names_of: Path | None = None
        self._build()
        self._restore_settings()
        self._connect()
        self._update_enabled()

    # ----------------------------------------------------------------- public API
    def set_model(self, path: Path | None) -> None:
        """A new model (or none): its old profile no longer applies."""
        self._model_path = Path(path) if path else None
        self._requested = None
        self._names_of = None  # the file may have changed on disk
        self.set_result(None)
        self.banner.hide()
        self.empty_label.setText(EMPTY_TEXT if self._model_path else NO_MODEL_TEXT)
        self._update_enabled()

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While profiling: an indeterminate bar and the message, Profile run disabled."""
        self._busy = busy
        self.progress.setVisible(busy)
        self.status_label.setText(message)
        self.status_label.setVisible(bool(message))
        self._update_enabled()

    def set_result(self, result: ProfileResult | None) -> None:
        """Show a profile (slowest first), or clear the tables with None."""
        self._result = result
        if result is None:
            self.node_model.reset([])
            self.op_model.reset([])
            self.summary_label.clear()
            self.summary_label.hide()
            self.stack.setCurrentIndex(0)
        else:
            self.banner.hide()
            rows = _node_rows(result, self._node_names(result))
            ops = [_OpRow(o.op_type, o.count, o.time_ms, o.share) for o in result.op_types()]
            self.node_model.reset(rows)
            self.op_model.reset(ops)
            self.node_bars.peak = max((r.share for r in rows), default=1.0) or 1.0
            self.op_bars.peak = max((o.share for o in ops), default=1.0) or 1.0
            warmup = self._requested.warmup if self._requested is not None else None
            self.summary_label.setText(summary_lines(result, warmup))
            self.summary_label.show()
            for view in (self._node_view, self._op_view):
                view.sortByColumn(2, Qt.SortOrder.DescendingOrder)
                view.fit_columns()
                view.scrollToTop()
            self.stack.setCurrentIndex(1)
        self._update_enabled()

    def result(self) -> ProfileResult | None:
        return self._result

    def show_error(self, message: str) -> None:
        """Non-modal: a red banner on top; the previous result stays visible."""
        self.banner.show_message(message)

    def error_text(self) -> str:
        return self.banner.message()

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
        app_settings().setValue(SETTINGS_EXPORT_DIR, str(dest.parent))
        self.status_label.setText(f"Saved {dest.name}")
        self.status_label.setVisible(True)
        return dest

    # ----------------------------------------------------------------- building
    def _build(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.banner = ErrorBanner()
        lay.addWidget(self.banner)
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
        self.layout_switch = SideBySide(self._build_controls(), self.stack)
        lay.addWidget(self.layout_switch, 1)

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

        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(10)
        self.progress.setTextVisible(False)
        self.progress.hide()
        lay.addWidget(self.progress)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                        QSizePolicy.Policy.Preferred)
        self.status_label.hide()
        lay.addWidget(self.status_label)
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
        self._node_view = FitTableView(self.node_proxy, self.node_bars, caps={4: 110})

        self.op_model = OpTypeTableModel()
        self.op_proxy = ProfileSortProxy(self)
        self.op_proxy.setSourceModel(self.op_model)
        self.op_bars = ShareBarDelegate(self)
        self._op_view = FitTableView(self.op_proxy, self.op_bars, caps={1: 60})

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

    @staticmethod
    def _save(key: str, value: object) -> None:
        app_settings().setValue(key, value)

    def _request_profile(self) -> None:
        if self._busy or self._model_path is None:
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

    def _node_names(self, result: ProfileResult) -> dict[int, str]:
        """Names of the nodes fused kernels cover: the result keeps only their indices.

        Covered nodes get no time of their own, so their names come from the model file,
        read once per model.
        """
        wanted = {i for n in result.nodes for i in n.covers}
        if not wanted:
            return {}
        if self._names_of != result.model:
            self._names = dict(enumerate(_read_names(result.model)))
            self._names_of = result.model
        return {i: self._names.get(i, "") for i in wanted}

    def _update_enabled(self) -> None:
        self.profile_button.setEnabled(self._model_path is not None and not self._busy)
        self.export_button.setEnabled(self._result is not None)


def _read_names(model: Path) -> list[str]:
    """Main-graph node names by index (weights stay on disk); [] when unreadable."""
    try:
        proto, _ = read_model_proto(model)
    except (OnnxStudioError, OSError):
        return []
    return [n.name for n in proto.graph.node]
