"""The Compare panel's table: one row per compared value, divergent rows tinted, the first
divergence marked; sorted numerically, filtered to divergent rows on request.

The view reads the model itself, without a QSortFilterProxyModel: the rows sort and
filter themselves, so a painted cell is one Python call (``TableModel.multiData``) with
its text cached, not seven through the proxy (resnet50's 175 rows: ~670 per paint)."""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import compress
from operator import attrgetter

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableView,
)

from onnxstudio.model.formatting import format_number, shape_text
from onnxstudio.runner.compare import Difference
from onnxstudio.ui.widgets.path_delegate import PathDelegate
from onnxstudio.ui.widgets.release import release_later
from onnxstudio.ui.widgets.tables import CENTER, RIGHT, Column, RecordTableModel

NODE_ID_ROLE = Qt.ItemDataRole.UserRole + 2  # "n12", or None for a value no node produces
EXCEEDS_ROLE = Qt.ItemDataRole.UserRole + 3
TINT = QColor(253, 226, 225)  # the same reds as the error banner, readable in dark mode too
FIRST_TINT = QColor(246, 184, 180)  # the first divergence stands out among its followers
TINT_TEXT = QColor(107, 21, 16)
GOOD = QColor(40, 130, 50)
BAD = QColor(190, 40, 30)


def _number(value: float) -> float:
    return float("inf") if math.isnan(value) else float(value)


def _mismatch(d: Difference) -> str:
    return f"{shape_text(d.shape_a)} vs {shape_text(d.shape_b)}"


def _cell(text: Callable[[Difference], str], why: bool) -> Callable[[Difference], str]:
    """A cell that needs both shapes equal: where they differ, the two shapes (``why``) or
    "—" (no numbers to show)."""
    return lambda d: text(d) if d.shape_a == d.shape_b else (_mismatch(d) if why else "—")


VALUE_MIN_CHARS = 16  # the Value column's least width, in characters
# The widest texts of the number columns (``magnitude``, ``cosine_text``): sized for
# "1.23e-05" alone, a max rel written 0.000168 read "0.0…168".
NUMBER_SAMPLES = ("8.88e-04", "8.8e+05", "0.00888", "8888", "Max abs", "Max rel")
COSINE_SAMPLES = ("0.888888", "-0.88888", "Cosine")


def magnitude(value: float) -> str:
    """A max abs or max rel in three digits and at most "1.68e-04"'s width: 0.000168 in
    'g' format took a wider column, and the value names' room with it."""
    if not math.isfinite(value) or value == 0:
        return format_number(value, 3)  # nan, inf, 0
    if 1e-3 <= value < 999.5:
        return f"{value:.3g}"
    if 999.5 <= value < 9999.5:
        return f"{value:.0f}"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.1e}"


def cosine_text(value: float) -> str:
    """Six places, five below zero (the sign takes the sixth's room)."""
    return f"{value:.6f}" if value >= 0 or not math.isfinite(value) else f"{value:.5f}"
FIT_ROWS = 200  # rows measured to fit the Node column


class DifferenceTableModel(RecordTableModel[Difference]):
    """Rows of `Difference`; kept in the order given (topological for intermediates)."""

    def __init__(self, intermediates: bool) -> None:
        super().__init__()
        self.intermediates = intermediates
        self.nodes: dict[int, tuple[str, str]] = {}  # index -> (name, op_type)
        self.first: str | None = None  # the first divergence's value, tinted deeper
        self._given: list[Difference] = []  # the rows in the order given
        self._position: dict[int, int] | None = None  # id(row) -> its place there
        self._texts: dict[tuple[int, int], str] = {}  # (id(row), column) -> its cell's text
        self.only_exceeding = False  # rows beyond the tolerance only
        self.columns = tuple(self._columns(intermediates))

    def _columns(self, intermediates: bool) -> list[Column[Difference]]:
        if intermediates:
            first = [
                Column("Node", self.node_text, lambda d: float(self.position(d)),
                       tip="Sort by this column to return to graph (topological) order"),
                Column("Value", lambda d: d.name)]
        else:
            first = [
                Column("Name", lambda d: d.name),
                Column("Shape", _cell(lambda d: shape_text(d.shape_a), why=True),
                       lambda d: float(math.prod(d.shape_a)))]
        # Intermediates say in Max abs why there are no numbers; outputs say it in Shape.
        return [*first,
                Column("Max abs", _cell(lambda d: magnitude(d.max_abs), intermediates),
                       lambda d: _number(d.max_abs), RIGHT, "Largest |A − B|"),
                Column("Max rel", _cell(lambda d: magnitude(d.max_rel), False),
                       lambda d: _number(d.max_rel), RIGHT,
                       "Largest |A − B| / max(|A|, |B|) where not ~0"),
                Column("Cosine", _cell(lambda d: cosine_text(d.cosine), False),
                       lambda d: _number(d.cosine), RIGHT,
                       "Cosine similarity of A and B (1 = same direction)"),
                Column("", lambda d: "✗" if d.exceeds else "✓", lambda d: float(d.exceeds),
                       CENTER, "✓ within the tolerance, ✗ beyond it")]

    def set_rows(self, rows: list[Difference], nodes: dict[int, tuple[str, str]],
                 first: str | None = None) -> None:
        """One reset, the rows in the graph order they come in (no sort after it)."""
        release_later(self.nodes, self._given, self._position, self._texts)
        self.nodes, self.first = nodes, first
        self._given, self._position, self._texts = rows, None, {}
        self.reset(self._shown(), (0, Qt.SortOrder.AscendingOrder))

    def _shown(self) -> list[Difference]:
        """The rows given, or those beyond the tolerance (no Python call per row)."""
        given = self._given
        return list(compress(given, map(attrgetter("exceeds"), given))) \
            if self.only_exceeding else given

    def set_only_exceeding(self, on: bool) -> None:
        """Only the rows beyond the tolerance, in the order the table is sorted by."""
        if on == self.only_exceeding:
            return
        self.only_exceeding = on
        sorted_by = self._sorted_by
        self.reset(self._shown(), (0, Qt.SortOrder.AscendingOrder))
        if sorted_by is not None:
            self.sort(*sorted_by)

    def display(self, row: int, column: int) -> object:
        """A cell's text, formatted once: a repaint reads it from ``_texts``."""
        record = self.rows[row]
        key = (id(record), column)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = self.columns[column].text(record)
        return text

    def position(self, d: Difference) -> int:
        """``d``'s place in the graph order the rows came in; the index is built at the
        first sort by Node, not as the rows land (100k rows: 15 ms of the window)."""
        if self._position is None:
            self._position = {id(row): i for i, row in enumerate(self._given)}
        return self._position[id(d)]

    def node_text(self, d: Difference) -> str:
        if d.producer is None:
            return "—"
        op = self.nodes.get(d.producer, ("", ""))[1]
        return f"{op} n{d.producer}" if op else f"n{d.producer}"

    def record_data(self, d: Difference, column: int, role: int) -> object:
        if role == NODE_ID_ROLE:
            return None if d.producer is None else f"n{d.producer}"
        if role == EXCEEDS_ROLE:
            return d.exceeds
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(d)
        if role == Qt.ItemDataRole.BackgroundRole and d.exceeds:
            first = self.intermediates and d.name == self.first
            return QBrush(FIRST_TINT if first else TINT)
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == 5:
                return QBrush(BAD if d.exceeds else GOOD)
            if d.exceeds:
                return QBrush(TINT_TEXT)
        return None

    def _tooltip(self, d: Difference) -> str:
        lines = [d.name]
        if d.producer is not None:
            name, op = self.nodes.get(d.producer, ("", ""))
            named = f" {name!r}" if name else ""
            lines.append(f"produced by {op or 'node'}{named} (n{d.producer})")
        shapes = shape_text(d.shape_a) if d.shape_a == d.shape_b else \
            f"A {shape_text(d.shape_a)}, B {shape_text(d.shape_b)} (shapes differ)"
        lines.append(f"shape {shapes}")
        lines.append(f"max abs {d.max_abs:.6g}, max rel {d.max_rel:.6g}, cosine {d.cosine:.9f}")
        if math.isfinite(d.ratio):
            lines.append(f"{d.ratio:.3g}× the allowed difference"
                         + (", beyond the tolerance" if d.exceeds else ""))
        else:
            lines.append("beyond the tolerance" if d.exceeds else "within the tolerance")
        return "\n".join(lines)


class DifferenceView(QTableView):
    """A read-only, sortable table whose rows activate (double-click, Enter) their node."""

    rowActivated = Signal(QModelIndex)

    def __init__(self, source: DifferenceTableModel) -> None:
        super().__init__()
        self.source = source
        self.setModel(source)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # value names by whole segments: elided by characters, conv1's and conv2's outputs
        # both read "/features/c…nv_output_0" at 1280
        self.setItemDelegateForColumn(1 if source.intermediates else 0, PathDelegate(self))
        self.setWordWrap(False)
        self.setSortingEnabled(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        # uniform rows: no row is ever measured
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setMinimumSectionSize(24)
        # Numbers get just the width "1.23e-05" / "0.000000" need (ResizeToContents would
        # reserve room for a sort arrow in every header), so names keep most of a narrow dock.
        fm = self.fontMetrics()
        number = max(map(fm.horizontalAdvance, NUMBER_SAMPLES)) + 10
        widths = {2: number, 3: number,
                  4: max(map(fm.horizontalAdvance, COSINE_SAMPLES)) + 10,
                  5: fm.horizontalAdvance("✗") + 12}
        for col, width in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        # Intermediates: a short "Conv n4" (sized in fit_columns) then the value name, which
        # takes what is left; outputs: the name, then its shape.
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive
                                    if source.intermediates else QHeaderView.ResizeMode.Stretch)
        # The value's name takes what is left, but never less than VALUE_MIN: stretched
        # into a narrow dock it read "…" on every row; below that the table scrolls.
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive if source.intermediates
                                    else QHeaderView.ResizeMode.ResizeToContents)
        self.doubleClicked.connect(self.rowActivated)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_value_column()

    def fit_value_column(self) -> None:
        if not self.source.intermediates:
            return
        header = self.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(header.count()) if c != 1)
        wanted = max(self.fontMetrics().horizontalAdvance("x" * VALUE_MIN_CHARS),
                     self.viewport().width() - others)
        if header.sectionSize(1) != wanted:
            header.resizeSection(1, wanted)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter activates on every platform (QAbstractItemView skips it on macOS)."""
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                self.currentIndex().isValid():
            self.rowActivated.emit(self.currentIndex())
            return
        super().keyPressEvent(event)

    def fit_columns(self) -> None:
        """The Node column as wide as its text, but never more than a third of a narrow dock."""
        if self.source.intermediates:
            metrics = self.fontMetrics()
            cap = metrics.horizontalAdvance("BatchNormal n1234")
            # the first rows, from the records (sizeHintForColumn asks every row)
            rows = self.source.rows[:FIT_ROWS]
            widest = max((metrics.horizontalAdvance(self.source.node_text(d)) for d in rows),
                         default=0) + 16
            self.horizontalHeader().resizeSection(
                0, max(metrics.horizontalAdvance("Node") + 24, min(widest, cap)))
            self.fit_value_column()

    def graph_order(self) -> None:
        """Back to the order the comparison gave (topological for intermediates)."""
        self.sortByColumn(0, Qt.SortOrder.AscendingOrder)

    def node_ids(self) -> list[str | None]:
        """Node ids of the rows as displayed (sorted and filtered), for tests and callers."""
        return [None if d.producer is None else f"n{d.producer}" for d in self.source.rows]
