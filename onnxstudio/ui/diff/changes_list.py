"""The list of what differs between two models: filter by status and text, click to jump.

The rows are a table model over the listed entries, read only for the rows the view
shows: a QTreeWidget item per row, built 200 a turn, took BERT-96's optimised graph 49
turns of 4-5 ms, each relaying out and repainting the list (11 ms more per turn)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QGridLayout,
    QHeaderView,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.diff import ModelDiff, NodeDiff
from onnxstudio.model.formatting import elide_path
from onnxstudio.render.overlay import DIFF_FILLS, DIFF_STATUS, text_on
from onnxstudio.ui.tasks import next_turn

MARKS = {"matched": "=", "changed": "~", "added": "+", "removed": "−"}
SHOWN_BY_DEFAULT = ("changed", "added", "removed")
MAX_ROWS = 20000  # a list longer than this is no help; the filter narrows it


Row = tuple[NodeDiff, str, str, str]  # the entry, A's and B's labels, what changed


def listed(result: ModelDiff, described: list[str],
           wanted: Collection[str] = SHOWN_BY_DEFAULT, needle: str = "") -> list[Row]:
    """The rows a filter keeps, ``MAX_ROWS`` at most: the default filter's are worked
    out by the diff's worker (on the GUI thread, dag100k's 100k entries took 20-30 ms)."""
    rows: list[Row] = []
    for entry, what in zip(result.nodes, described, strict=True):
        if entry.status not in wanted:
            continue
        a = entry.a.label if entry.a is not None else ""
        b = entry.b.label if entry.b is not None else ""
        if needle and needle not in f"{entry.op_type} {a} {b} {what}".lower():
            continue
        rows.append((entry, a, b, what))
        if len(rows) >= MAX_ROWS:
            break
    return rows


def describe_all(result: ModelDiff) -> list[str]:
    """Every node's :func:`describe_changes`, in order (the diff's worker computes them,
    so the list's refill does not)."""
    return [describe_changes(entry, result) for entry in result.nodes]


def describe_changes(entry: NodeDiff, result: ModelDiff | None = None) -> str:
    """One line: what kinds of change a node has, e.g. 'attribute epsilon, weight W';
    for a removed node whose result another node now gives (a fusion), which one."""
    if entry.status == "removed" and result is not None:
        into = result.absorbed_by(entry)
        if into is not None:
            return f"only in A; its result now comes from {into.op_type} {into.label}"
    if entry.status in ("added", "removed"):
        return f"only in {'B' if entry.status == 'added' else 'A'}"
    return ", ".join(f"{c.kind} {c.name}" if c.kind != "op_type" else f"{c.a} → {c.b}"
                     for c in entry.changes)


Index = QModelIndex | QPersistentModelIndex
_CENTRE = Qt.AlignmentFlag.AlignCenter
_TOP_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop


class ChangeRows(QAbstractTableModel):
    """The listed rows: the status mark, the operator, the name over what changed."""

    HEADERS = ("", "Operator", "Node")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []
        self._colours = {status: (QBrush(QColor(fill)), QBrush(QColor(text_on(fill))))
                         for status, fill in zip(DIFF_STATUS, DIFF_FILLS, strict=True)}

    def set_rows(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's default)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry, a, b, what = self.rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return MARKS[entry.status]
            if column == 1:
                return entry.op_type
            name = a if a == b or not b else b if not a else f"{a} → {b}"
            return f"{name}\n{what or 'no change'}"
        if role == Qt.ItemDataRole.UserRole:
            return entry
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return _CENTRE if column == 0 else _TOP_LEFT if column == 1 else None
        if column == 0 and role in (Qt.ItemDataRole.BackgroundRole,
                                    Qt.ItemDataRole.ForegroundRole):
            return self._colours[entry.status][role == Qt.ItemDataRole.ForegroundRole]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 0:
                return entry.status
            if column == 2:
                return "\n".join(t for t in (f"A: {a}" if a else "", f"B: {b}" if b else "",
                                             what) if t)
        return None


class _NameOverChange(QStyledItemDelegate):
    """The node's name (by whole segments, then in the middle: its layer and op stay, and
    pool1's and pool2's MaxPool differ) over what changed (elided at the end)."""

    @staticmethod
    def shown(text: str, metrics: QFontMetrics, width: int) -> list[str]:
        """The two lines as drawn in ``width`` pixels."""
        lines = text.split("\n", 1)
        lines[0] = elide_path(lines[0], lambda t: metrics.horizontalAdvance(t) <= width)
        modes = (Qt.TextElideMode.ElideMiddle, Qt.TextElideMode.ElideRight)
        return [metrics.elidedText(line, mode, width)
                for line, mode in zip(lines, modes, strict=False)]

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        # the item's own text: the style option's has its newline as U+2028
        text, opt.text = str(index.data(Qt.ItemDataRole.DisplayRole)), ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect.adjusted(4, 0, -4, 0)
        metrics = opt.fontMetrics
        selected = opt.state & QStyle.StateFlag.State_Selected
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        lines = self.shown(text, metrics, rect.width())
        painter.save()
        painter.setPen(opt.palette.color(role))
        top = rect.top() + (rect.height() - metrics.height() * len(lines)) // 2
        for i, line in enumerate(lines):
            painter.drawText(rect.left(), top + i * metrics.height() + metrics.ascent(), line)
        painter.restore()


class ChangesList(QWidget):
    """Rows of changed, added and removed nodes (matched too, on request)."""

    activated = Signal(object)  # NodeDiff

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: ModelDiff | None = None
        self.query = QLineEdit()
        self.query.setPlaceholderText("Filter by name, operator or change…")
        self.query.setClearButtonEnabled(True)
        self.query.textChanged.connect(self._refill)
        self.boxes: dict[str, QCheckBox] = {}
        row = QGridLayout()  # two by two: the list shares the width with two canvases
        row.setContentsMargins(0, 0, 0, 0)
        for i, status in enumerate(DIFF_STATUS):
            box = QCheckBox(status.capitalize())
            box.setChecked(status in SHOWN_BY_DEFAULT)
            box.toggled.connect(self._refill)
            self.boxes[status] = box
            row.addWidget(box, i // 2, i % 2)
        self.model = ChangeRows(self)
        # A table, not a tree: a QTreeView lays out every row, asking the model of each
        # whether it has children (9,700 Python calls, 35 ms, on BERT-96's optimised graph)
        self.tree = QTableView()
        self.tree.setModel(self.model)
        # Two lines a row, the node's name over what changed, in columns that fit the
        # list's width: with A, B and What changed side by side, a 1280-wide window
        # showed the list's first names cut at its edge, and what changed off-screen.
        self.tree.setShowGrid(False)
        self.tree.setWordWrap(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setItemDelegateForColumn(2, _NameOverChange(self.tree))
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        rows = self.tree.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(2 * self.tree.fontMetrics().height() + 6)  # every row two lines
        header = self.tree.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setResizeContentsPrecision(0)  # the rows shown: not a thousand read per fill
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft)
        self.tree.setColumnWidth(0, 28)
        self.tree.setMinimumWidth(200)
        self.tree.activated.connect(self._on_index)
        self.tree.clicked.connect(self._on_index)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(self.query)
        column.addLayout(row)
        column.addWidget(self.tree)
        self._entries: list[NodeDiff] = []
        self._described: list[str] = []
        self._fills = 0  # bumped by each fill: a later turn of an older fill stops
        # A new result's rows wait while this says so (the diff's canvases being laid
        # out): each cell a paint shows is a few Python calls, and each call waited for
        # the GIL the layout's workers held (BERT-96's optimised graph: gaps of 80-230
        # ms that were the list's first paints, with no CPU of the window's in them).
        self.defer_while: Callable[[], bool] = lambda: False

    def set_result(self, result: ModelDiff, described: list[str] | None = None,
                   counts: dict[str, int] | None = None, rows: list[Row] | None = None
                   ) -> None:
        """Show ``result``; ``described`` (:func:`describe_all`), ``counts``
        (``result.summary()``) and ``rows`` (:func:`listed` with the default filter)
        when already worked out."""
        self.result = result
        self._described = described if described is not None else describe_all(result)
        counts = counts or result.summary()
        for status, box in self.boxes.items():
            box.setText(f"{status.capitalize()} ({counts[status]:,})")
        # the diff landing has its canvases to show this turn
        self._fill(first_now=False, ready=rows)

    def rows(self) -> list[NodeDiff]:
        """The entries listed now, in order (what the user sees)."""
        return list(self._entries)

    def _refill(self) -> None:
        self._fill(first_now=True)  # the filter changed: no empty list for a frame

    def _fill(self, first_now: bool, ready: list[Row] | None = None) -> None:
        """The rows the filter keeps (``ready``: the default filter's, if it is on), now
        or, for a new result (the diff landing has its canvases to show this turn), in
        the next turn; the newest fill wins."""
        self._fills += 1
        if self.result is None:
            self._entries = []
            self.model.set_rows([])
            return
        wanted = {s for s, box in self.boxes.items() if box.isChecked()}
        needle = self.query.text().strip().lower()
        rows = ready if ready is not None and wanted == set(SHOWN_BY_DEFAULT) \
            and not needle else listed(self.result, self._described, wanted, needle)
        self._entries = [row[0] for row in rows]
        if first_now:
            self.model.set_rows(rows)
            return
        self.model.set_rows([])
        fill = self._fills

        def later() -> None:
            if fill != self._fills:
                return  # a newer fill took over
            if self.defer_while():
                next_turn(self, later)
            else:
                self.model.set_rows(rows)

        next_turn(self, later)

    def _on_index(self, index: QModelIndex) -> None:
        entry = index.data(Qt.ItemDataRole.UserRole)
        if entry is not None:
            self.activated.emit(entry)

    def select_entry(self, entry: NodeDiff | None) -> None:
        """Highlight ``entry``'s row (a click on the canvas), without emitting."""
        selection = self.tree.selectionModel()
        selection.clearSelection()
        row = next((i for i, e in enumerate(self._entries) if e is entry), -1)
        if 0 <= row < self.model.rowCount():
            index = self.model.index(row, 0)
            selection.select(index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                             | QItemSelectionModel.SelectionFlag.Rows)
            self.tree.scrollTo(index)
