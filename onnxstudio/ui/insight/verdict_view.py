"""A test set's verdict in the run panel: pass or fail per expected output (max |Δ| and the
tolerance), or for a folder of ``test_data_set_N`` one row per set; "Compare" on a failure
runs the set's inputs through onnxruntime and onnx's reference evaluator and jumps to the
first node where they part (onnx's expected outputs come from reference implementations)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.runner.pipeline import RunOutcome
from onnxstudio.runner.testdata import Verdict

_STYLES = {  # background, border, text: the compare panel's verdict colours
    "pass": ("#e3f4e1", "#8cc084", "#1d4d18"),
    "fail": ("#fde2e1", "#e0908a", "#6b1510"),
    "error": ("#fdf3d8", "#d9b45a", "#5a4310"),
    "none": ("#fdf3d8", "#d9b45a", "#5a4310"),
}
_ROW = {"pass": QColor(46, 160, 67, 50), "fail": QColor(207, 34, 46, 50),
        "error": QColor(217, 180, 90, 70)}
_WORDS = {"pass": "✓ pass", "fail": "✗ fail", "error": "! cannot run", "none": "—"}


def _delta(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:.3g}"


class VerdictView(QWidget):
    """Hidden until a run of test data; `show_outcomes` fills it."""

    compareRequested = Signal(str)  # the set whose inputs to compare
    setChosen = Signal(int)  # a table row double-clicked: show that set's outputs

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("verdict-view")
        self._failed_set = ""
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip(
            "Run this set's inputs through onnxruntime and onnx's reference evaluator, and "
            "jump to the first node whose values part")
        self.compare_button.clicked.connect(
            lambda: self.compareRequested.emit(self._failed_set))
        row.addWidget(self.header, 1)
        row.addWidget(self.compare_button, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(row)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setMinimumHeight(70)
        self.table.cellDoubleClicked.connect(lambda r, _c: self.setChosen.emit(r))
        lay.addWidget(self.table)
        self.hide()

    def show_outcomes(self, outcomes: list[RunOutcome]) -> None:
        """The verdict of one set, or the table of several; hidden without test data."""
        checks = [o.check for o in outcomes if o.check is not None]
        if not checks:
            self.hide()
            return
        if len(checks) == 1:
            self._one(checks[0])
        else:
            self._many(checks)
        self.show()

    def _style(self, word: str, text: str) -> None:
        bg, border, fg = _STYLES[word]
        self.header.setStyleSheet(f"background: {bg}; border: 1px solid {border}; "
                                  f"border-radius: 4px; color: {fg}; padding: 4px")
        self.header.setText(text)

    def _one(self, check: Verdict) -> None:
        self._failed_set = check.source if check.word == "fail" else ""
        self._style(check.word, check.summary())
        self._fill(["Output", "Verdict", "max |Δ|", "Tolerance", "Why"],
                   [(c.name, "pass" if c.passed else "fail", _delta(c.max_abs), c.tolerance,
                     c.reason) for c in check.checks])
        self.compare_button.setVisible(bool(self._failed_set))

    def _many(self, checks: list[Verdict]) -> None:
        words = [c.word for c in checks]
        failed = [c for c in checks if c.word == "fail"]
        self._failed_set = failed[0].source if failed else ""
        overall = "fail" if failed else ("error" if "error" in words else "pass")
        self._style(overall, f"{len(checks)} test sets: {words.count('pass')} pass, "
                             f"{words.count('fail')} fail, {words.count('error')} cannot run"
                    + (f" — Compare runs {self._failed_set}" if failed else ""))
        rows = []
        for c in checks:
            first = c.first_failure()
            worst = max((x.max_abs for x in c.checks), default=0.0)
            rows.append((c.source, c.word, _delta(worst),
                         c.error or (first.reason if first else "")))
        self._fill(["Set", "Verdict", "max |Δ|", "Why"], rows)
        self.compare_button.setVisible(bool(failed))

    def _fill(self, headers: list[str], rows: Sequence[tuple[str, ...]]) -> None:
        t = self.table
        t.clear()
        t.setColumnCount(len(headers))
        t.setHorizontalHeaderLabels(headers)
        t.setRowCount(len(rows))
        for r, values in enumerate(rows):
            word = values[1]
            for c, value in enumerate(values):
                item = QTableWidgetItem(_WORDS.get(value, value) if c == 1 else value)
                item.setToolTip(value)
                if word in _ROW:
                    item.setBackground(QBrush(_ROW[word]))
                t.setItem(r, c, item)
        t.resizeColumnsToContents()
        t.horizontalHeader().setSectionResizeMode(len(headers) - 1,
                                                  QHeaderView.ResizeMode.Stretch)
        frame = t.horizontalHeader().sizeHint().height() + 2 * t.frameWidth() + 2
        t.setFixedHeight(frame + t.verticalHeader().defaultSectionSize() * min(len(rows), 8))
