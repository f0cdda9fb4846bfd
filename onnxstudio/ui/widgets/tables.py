"""The table-model base every read-only table of the window shares.

`TableModel` answers Qt's questions (row and column counts, header text, tips and
alignment, data by role) once; a table only says what its cells are. Tables of records
declare their columns as data (`Column`: title, text, sort key, alignment, header tip) in
`RecordTableModel`; a numpy matrix shown through a view (`MatrixTableModel`) formats only
the cells Qt paints, so a million-value tensor appears at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QSize,
    Qt,
)
from PySide6.QtWidgets import QHeaderView, QStyle, QWidget

from onnxstudio.model.formatting import format_number
from onnxstudio.ui.widgets.release import release_later

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # what a column sorts by: numbers as numbers
LEFT = Qt.AlignmentFlag.AlignLeft
RIGHT = Qt.AlignmentFlag.AlignRight
CENTER = Qt.AlignmentFlag.AlignHCenter
_DISPLAY = Qt.ItemDataRole.DisplayRole
_ALIGN = Qt.ItemDataRole.TextAlignmentRole

R = TypeVar("R")
Index = QModelIndex | QPersistentModelIndex


class TableModel(QAbstractTableModel):
    """Counts, headers and data dispatch; subclasses fill in the table-specific hooks."""

    aligned_headers: ClassVar[bool] = False  # headers line up with their cells

    # -- hooks ------------------------------------------------------------------------
    def row_count(self) -> int:
        raise NotImplementedError

    def column_count(self) -> int:
        raise NotImplementedError

    def display(self, row: int, column: int) -> object:
        raise NotImplementedError

    def header_text(self, section: int, orientation: Qt.Orientation) -> str | None:
        return str(section)

    def header_tip(self, section: int) -> str | None:
        return None

    def alignment(self, column: int) -> Qt.AlignmentFlag:
        return LEFT

    def role_data(self, row: int, column: int, role: int) -> object:
        """Any other role of a cell (tooltip, colours, the table's own roles)."""
        return None

    # -- Qt ---------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.column_count()

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = _DISPLAY) -> object:
        if role == _DISPLAY:
            return self.header_text(section, orientation)
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.header_tip(section)
        if role == _ALIGN and self.aligned_headers:
            return int(self.alignment(section) | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: Index, role: int = _DISPLAY) -> object:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == _DISPLAY:
            return self.display(row, column)
        if role == _ALIGN:
            return int(self.alignment(column) | Qt.AlignmentFlag.AlignVCenter)
        return self.role_data(row, column, role)

    def multiData(self, index: Index,
                  roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a delegate asks of a cell in one call: Qt's default called ``data``
        once per role, seven Python calls per painted cell (Compare's table on resnet50:
        ~670 per paint). A subclass overriding ``data`` is answered through it."""
        if not index.isValid():
            return
        overridden = type(self).data is not TableModel.data
        row, column = index.row(), index.column()
        slots: Iterable[QModelRoleData] = (  # a span iterates, though its stubs say not
            [roleDataSpan] if isinstance(roleDataSpan, QModelRoleData)
            else cast(Iterable[QModelRoleData], roleDataSpan))
        for slot in slots:
            role = slot.role()
            if overridden:
                value = self.data(index, role)
            elif role == _DISPLAY:
                value = self.display(row, column)
            elif role == _ALIGN:
                value = int(self.alignment(column) | Qt.AlignmentFlag.AlignVCenter)
            else:
                value = self.role_data(row, column, role)
            if value is not None:
                slot.setData(value)


@dataclass(frozen=True)
class Column(Generic[R]):
    """One column of a record table, declared as data."""

    title: str
    text: Callable[[R], str]
    sort: Callable[[R], object] | None = None  # SORT_ROLE; the text when None
    align: Qt.AlignmentFlag = LEFT
    tip: str | None = None  # the header's tooltip


class RecordTableModel(TableModel, Generic[R]):
    """Rows of plain records through declared columns; ``record_data`` adds other roles."""

    columns: tuple[Column[R], ...] = ()

    def __init__(self, columns: Sequence[Column[R]] | None = None) -> None:
        super().__init__()
        if columns is not None:
            self.columns = tuple(columns)
        self.rows: list[R] = []
        self._sorted_by: tuple[int, Qt.SortOrder] | None = None

    def reset(self, rows: Sequence[R], sorted_by: tuple[int, Qt.SortOrder] | None = None
              ) -> None:
        """Show ``rows``; ``sorted_by``: the (column, order) they already come in, which
        ``sort`` then keeps without sorting them again (6k profile rows: 35 ms)."""
        self.beginResetModel()
        old, self.rows = self.rows, list(rows)
        self._sorted_by = sorted_by
        self.endResetModel()
        release_later(old)

    def record_data(self, record: R, column: int, role: int) -> object:
        return None

    def sorts_last(self, record: R) -> bool:
        """Rows that stay below the others in either order (see ``sort``)."""
        return False

    def sort_key(self, record: R, column: int) -> object:
        c = self.columns[column]
        return c.sort(record) if c.sort is not None else c.text(record)

    def row_count(self) -> int:
        return len(self.rows)

    def column_count(self) -> int:
        return len(self.columns)

    def display(self, row: int, column: int) -> object:
        return self.columns[column].text(self.rows[row])

    def header_text(self, section: int, orientation: Qt.Orientation) -> str | None:
        return self.columns[section].title if orientation == Qt.Orientation.Horizontal else None

    def header_tip(self, section: int) -> str | None:
        return self.columns[section].tip

    def alignment(self, column: int) -> Qt.AlignmentFlag:
        return self.columns[column].align

    def role_data(self, row: int, column: int, role: int) -> object:
        record = self.rows[row]
        if role == SORT_ROLE:
            return self.sort_key(record, column)
        return self.record_data(record, column, role)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows themselves, in Python (a proxy that delegates here sorts without
        calling back into Python twice per comparison, which froze the window for seconds
        on 8k rows). ``sorts_last`` rows stay below the others in either order."""
        if not 0 <= column < len(self.columns) or (column, order) == self._sorted_by:
            return
        self._sorted_by = (column, order)
        keys: list[Any] = [self.sort_key(r, column) for r in self.rows]  # compared as given
        reverse = order == Qt.SortOrder.DescendingOrder
        try:
            order_ = sorted(range(len(keys)), key=lambda r: keys[r], reverse=reverse)
        except TypeError:
            order_ = sorted(range(len(keys)), key=lambda r: str(keys[r]), reverse=reverse)
        order_.sort(key=lambda r: self.sorts_last(self.rows[r]))  # stable
        self.layoutAboutToBeChanged.emit()
        moved = {old: new for new, old in enumerate(order_)}
        before = self.persistentIndexList()
        self.rows = [self.rows[r] for r in order_]
        self.changePersistentIndexList(
            before, [self.index(moved[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()


class MatrixTableModel(TableModel):
    """A 2-D numpy array as a table, kept as given (a view, not a copy); numbers right."""

    digits: ClassVar[int] = 6  # significant digits of a float cell

    def __init__(self) -> None:
        super().__init__()
        self._matrix: np.ndarray = np.zeros((0, 0))

    def set_matrix(self, matrix: np.ndarray | None) -> None:
        self.beginResetModel()
        self._matrix = np.zeros((0, 0)) if matrix is None else matrix
        self.endResetModel()

    def matrix(self) -> np.ndarray:
        return self._matrix

    def row_count(self) -> int:
        return int(self._matrix.shape[0])

    def column_count(self) -> int:
        return int(self._matrix.shape[1])

    def display(self, row: int, column: int) -> object:
        return format_number(self._matrix[row, column], self.digits)

    def alignment(self, column: int) -> Qt.AlignmentFlag:
        return RIGHT


def delegate_text_padding(view: QWidget) -> int:
    """What QStyledItemDelegate adds around a cell's text in ``view`` (and a pixel it
    rounds up): for fitting a column to texts measured with font metrics."""
    margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view)
    return 2 * (margin + 1) + 1


class CompactHeader(QHeaderView):
    """A horizontal header whose sections sized to their contents keep room for the sort
    arrow in the sorted column only: Qt reserves it in every section (a two-line title's
    twice as wide), ~25 px per column that pushed the Cost table's numbers out of its
    dock. Qt sizes the sections again when the sorted column changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.setSectionsClickable(True)  # as QTableView's own header: a click sorts
        self.setHighlightSections(True)

    def sectionSizeFromContents(self, logicalIndex: int) -> QSize:
        size = super().sectionSizeFromContents(logicalIndex)
        if self.isSortIndicatorShown() and logicalIndex != self.sortIndicatorSection():
            margin = self.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, self)
            size.setWidth(size.width() - size.height() - margin)
        return size
