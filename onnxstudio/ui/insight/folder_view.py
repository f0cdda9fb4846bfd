"""A folder (or many files) through the model: a table filled row by row as images finish
(file, thumbnail, top-1 with score, latency), accuracy and a confusion matrix when the
sub-folder names are class labels, and CSV export."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.runner.folder import FolderRow, summarise, to_csv
from onnxstudio.ui.widgets.images import qimage_from_array

THUMB = 40
COLUMNS = ("File", "Top-1", "Score", "Latency", "Truth")
RIGHT_BG = QColor(46, 160, 67, 60)
WRONG_BG = QColor(207, 34, 46, 60)


class FolderView(QWidget):
    """Rows arrive with `add_row`; `finish` adds the summary. `rows()` for tests/export."""

    rowActivated = Signal(object)  # FolderRow (double-click: show that image's run)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[FolderRow] = []
        self._total = 0
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Save the table (file, truth, top-1, score, latency)")
        head.addWidget(self.caption, 1)
        head.addWidget(self.export_button)
        lay.addLayout(head)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("folder-table")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setIconSize(QSize(THUMB, THUMB))
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(THUMB + 6)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3, 4):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(220)
        lay.addWidget(self.table)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.confusion = QTableWidget(0, 0)
        self.confusion.setObjectName("confusion-matrix")
        self.confusion.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.confusion.setToolTip("Rows: the sub-folder (truth); columns: the model's top-1")
        self.confusion.hide()
        lay.addWidget(self.confusion)
        self.export_button.clicked.connect(self._export)
        self.table.cellDoubleClicked.connect(
            lambda r, _c: self.rowActivated.emit(self._rows[r]) if r < len(self._rows) else None)
        self.hide()

    def rows(self) -> list[FolderRow]:
        return list(self._rows)

    def start(self, total: int, where: str) -> None:
        self._rows = []
        self._total = total
        self.table.setRowCount(0)
        self.summary.clear()
        self.confusion.hide()
        self.export_button.setEnabled(False)
        self.caption.setText(f"{where}: 0 of {total} images")
        self.show()

    def add_row(self, row: FolderRow) -> None:
        self._rows.append(row)
        r = self.table.rowCount()
        self.table.insertRow(r)
        name = QTableWidgetItem(row.item.name)
        name.setToolTip(str(row.item.path))
        if row.thumbnail is not None:
            name.setIcon(QIcon(QPixmap.fromImage(qimage_from_array(row.thumbnail))))
        top = QTableWidgetItem(row.label or (f"error: {row.error}" if row.error else "—"))
        top.setToolTip(row.error or row.label or "")
        score = QTableWidgetItem("" if row.score is None else f"{row.score:.3f}")
        latency = QTableWidgetItem("" if row.latency_ms is None else f"{row.latency_ms:.1f} ms")
        mark = {True: "✓ ", False: "✗ ", None: ""}[row.correct]
        shown_truth = row.item.truth or ""
        if row.truth_label and row.truth_label != shown_truth:  # n02123045 (tabby)
            shown_truth = f"{shown_truth} ({row.truth_label})"
        truth = QTableWidgetItem(mark + shown_truth)
        for col, item in enumerate((name, top, score, latency, truth)):
            if row.correct is not None:
                item.setBackground(QBrush(RIGHT_BG if row.correct else WRONG_BG))
            if col in (2, 3):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, col, item)
        self.caption.setText(f"{len(self._rows)} of {self._total} images")

    def finish(self, cancelled: bool = False) -> None:
        s = summarise(self._rows)
        state = "cancelled after" if cancelled else "done:"
        text = f"{state} {s.images} of {self._total} images, {s.errors} failed"
        if s.accuracy is not None:
            judged = sum(sum(line) for line in s.matrix)
            text += f" — accuracy {s.accuracy:.1%} over {judged} labelled by sub-folder"
        elif any(row.item.truth for row in self._rows):  # loose files claim no truth
            text += " — no accuracy: sub-folder names are not class labels"
        self.caption.setText(text)
        self.summary.setText("Confusion matrix (rows: truth, columns: top-1)"
                             if s.accuracy is not None else "")
        self.export_button.setEnabled(bool(self._rows))
        self._show_confusion(s.classes, s.matrix, s.truths)

    def _show_confusion(self, classes: list[str], matrix: list[list[int]], truths: int) -> None:
        """Rows: the classes that occur as truth; columns: those and the classes that
        were only ever predicted, marked so."""
        c = self.confusion
        if not classes:
            c.hide()
            return
        matrix = matrix[:truths]
        c.setRowCount(truths)
        c.setColumnCount(len(classes))
        c.setHorizontalHeaderLabels(classes[:truths] + [f"{name} (predicted only)"
                                                         for name in classes[truths:]])
        c.setVerticalHeaderLabels(classes[:truths])
        peak = max((n for line in matrix for n in line), default=1) or 1
        for i, line in enumerate(matrix):
            for j, n in enumerate(line):
                item = QTableWidgetItem(str(n) if n else "")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if n:
                    base = RIGHT_BG if i == j else WRONG_BG
                    item.setBackground(QBrush(QColor(base.red(), base.green(), base.blue(),
                                                     40 + round(160 * n / peak))))
                c.setItem(i, j, item)
        c.resizeColumnsToContents()
        height = c.horizontalHeader().height() + sum(c.rowHeight(i) for i in range(len(classes)))
        c.setFixedHeight(min(300, height + 2 * c.frameWidth() + 2))
        c.show()

    def export_csv(self, path: str | Path) -> None:
        Path(path).write_text(to_csv(self._rows), encoding="utf-8")

    def _export(self) -> None:
        file, _ = QFileDialog.getSaveFileName(self, "Export results as CSV", "results.csv",
                                              "CSV (*.csv)")
        if file:
            try:
                self.export_csv(file)
            except OSError as exc:
                self.caption.setText(f"{Path(file).name}: cannot write ({exc.strerror or exc})")
