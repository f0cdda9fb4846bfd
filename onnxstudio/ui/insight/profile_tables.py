"""The profile panel's two tables: their models (nodes, operator types), the numeric sort and
filter proxy, the share-bar delegate and a view whose first column takes the spare width."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QRect,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from onnxstudio.model.formatting import format_ms, plural
from onnxstudio.runner.profile_rows import NodeRow, OpRow
from onnxstudio.ui.widgets.name_column import NameColumn
from onnxstudio.ui.widgets.tables import (
    RIGHT,
    SORT_ROLE,
    Column,
    RecordTableModel,
    delegate_text_padding,
)

FILTER_ROLE = Qt.ItemDataRole.UserRole + 2  # what the filter box matches (name, id, op)
ID_ROLE = Qt.ItemDataRole.UserRole + 3  # node id ("n12"), "" for unmapped kernels
UNMAPPED_ROLE = Qt.ItemDataRole.UserRole + 4
RESIZE_ROWS = 24  # rows measured when fitting a column (the slowest: they are shown first)


_MS = "Time\n(ms)"  # units on a second header line keep numbers narrow in a ~380 px dock
_SHARE = "Share\n(%)"


def _share(share: float) -> str:
    """A percentage to 0.1, and a smaller one to two significant digits: among dag100k's
    100k nodes even the slowest takes 0.03 %, and every row read "0.0"."""
    percent = share * 100
    if percent >= 0.095 or percent <= 0:
        return f"{percent:.1f}"
    text = f"{percent:.{min(4, 1 - math.floor(math.log10(percent)))}f}"
    return text if float(text) > 0 else "<0.0001"


class NodeTableModel(RecordTableModel[NodeRow]):
    """One row per timed node (slowest first), then the kernels no node accounts for."""

    aligned_headers = True
    columns = (
        Column("Node", lambda r: r.label, lambda r: r.label.casefold()),
        Column("Op type", lambda r: r.op_type, lambda r: r.op_type.casefold()),
        Column(_MS, lambda r: format_ms(r.time_ms), lambda r: r.time_ms, RIGHT),
        Column(_SHARE, lambda r: _share(r.share), lambda r: r.share, RIGHT),
        Column("Fused", lambda r: r.fused, lambda r: r.fused.casefold()),
    )

    def sorts_last(self, record: NodeRow) -> bool:
        return record.unmapped  # kernels no node accounts for stay below the nodes

    def record_data(self, record: NodeRow, column: int, role: int) -> object:
        if role == FILTER_ROLE:
            return f"{record.label} {record.node_id} {record.op_type}"
        if role == ID_ROLE:
            return record.node_id
        if role == UNMAPPED_ROLE:
            return record.unmapped
        if role == Qt.ItemDataRole.ToolTipRole:
            return record.tooltip
        if role == Qt.ItemDataRole.FontRole and record.unmapped:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and record.unmapped:
            return QBrush(QColor(128, 128, 128))
        return None


class OpTypeTableModel(RecordTableModel[OpRow]):
    """Totals per operator type (unmapped kernels included, under their own type)."""

    aligned_headers = True
    columns = (
        Column("Op type", lambda r: r.op_type, lambda r: r.op_type.casefold()),
        Column("Nodes", lambda r: str(r.count), lambda r: r.count, RIGHT),
        Column(_MS, lambda r: format_ms(r.time_ms), lambda r: r.time_ms, RIGHT),
        Column(_SHARE, lambda r: _share(r.share), lambda r: r.share, RIGHT),
    )

    def record_data(self, record: OpRow, column: int, role: int) -> object:
        if role == FILTER_ROLE:
            return record.op_type
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{record.op_type}: {plural(record.count, 'node')}, "
                    f"{format_ms(record.time_ms)} ms")
        return None


class ProfileSortProxy(QSortFilterProxyModel):
    """Filters rows; sorting is the source table's own (``RecordTableModel.sort``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFilterRole(FILTER_ROLE)
        self.setFilterKeyColumn(0)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)

    def multiData(self, index: QModelIndex | QPersistentModelIndex,
                  roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """A painted cell's roles in one call to the records (``TableModel.multiData``):
        Qt's proxy asked the source's ``data`` once per role, seven calls a cell."""
        source = self.sourceModel()
        if source is not None and index.isValid():
            source.multiData(self.mapToSource(index), roleDataSpan)


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

    def __init__(self, proxy: QSortFilterProxyModel, bars: ShareBarDelegate, key: str,
                 share_column: int = 3, caps: dict[int, int] | None = None) -> None:
        super().__init__()
        self.share_column = share_column
        self.caps = caps or {}
        self._unfit = False  # rows changed while hidden: fit when shown
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
        # the first column: what the others leave, or wider by hand (remembered)
        self.names = NameColumn(self, key, self.FIRST_MIN)
        self.sortByColumn(2, Qt.SortOrder.DescendingOrder)

    def _content_width(self, column: int) -> int:
        """Widest text of the first rows shown (the slowest): measuring thousands of rows,
        as ``sizeHintForColumn`` does, froze the window for seconds. Read from the
        records, as the delegate shows them, without a model index per cell (through the
        proxy, each asks Python for the row and column counts too): half of a profile's
        landing otherwise."""
        source = self._records()
        metrics = self.fontMetrics()
        widest = 0
        for record in source.rows[:RESIZE_ROWS]:
            font = source.record_data(record, column, Qt.ItemDataRole.FontRole)
            fm = QFontMetrics(font) if isinstance(font, QFont) else metrics
            widest = max(widest, fm.horizontalAdvance(source.columns[column].text(record)))
        return widest + delegate_text_padding(self) if widest else 0

    def _records(self) -> RecordTableModel[Any]:
        proxy = self.model()
        assert isinstance(proxy, QSortFilterProxyModel)
        source = proxy.sourceModel()
        assert isinstance(source, RecordTableModel)
        return source

    def fit_columns(self) -> None:
        """Measure the columns after the rows changed; the first column is set on resize.
        A hidden table (the other tab) is measured when it is shown."""
        self._unfit = not self.isVisible()
        if self._unfit:
            return
        header = self.horizontalHeader()
        for col in range(1, header.count()):
            # The header's hint already leaves room for the sort arrow.
            width = max(header.sectionSizeHint(col), self._content_width(col))
            if col == self.share_column:
                width = max(self.SHARE_WIDTH, header.sectionSizeHint(col))
            header.resizeSection(col, min(width, self.caps.get(col, width)))
        # Short names ("n62") need no 140 px: then Fused gets the room instead.
        self.names.least = min(self.FIRST_MIN, max(header.sectionSizeHint(0),
                                                   self._content_width(0)))
        self.names.fit()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._unfit:
            self.fit_columns()
