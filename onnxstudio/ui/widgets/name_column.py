"""A table's first (name) column: what the other columns leave, or wider by the user's hand.

Cost and profile tables name their rows by scoped node names, which the other columns'
numbers squeeze in a side dock (BERT's names read "…yer.0/…/MatMul" in 119 px). The
column takes the width the others leave; the user may drag it wider, the table then
scrolling sideways, and that width is remembered for the next session.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QHeaderView, QTableView

from onnxstudio.ui.settings import app_settings, store


class NameColumn(QObject):
    """Keeps ``view``'s column 0 at ``max(least, the rest, the user's width)``; the
    user's width is kept under the settings ``key``."""

    def __init__(self, view: QTableView, key: str, least: int) -> None:
        super().__init__(view)
        self._view, self._key, self.least = view, key, least
        try:
            self.wanted = int(str(app_settings().value(key, 0) or 0))
        except ValueError:
            self.wanted = 0
        self._fitting = False
        header = view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.sectionResized.connect(self._resized)
        view.viewport().installEventFilter(self)  # its width: a scroll bar comes or goes

    def rest(self) -> int:
        """What the other columns leave of the view's width."""
        header = self._view.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(1, header.count())
                     if not header.isSectionHidden(c))
        return self._view.viewport().width() - others

    def fit(self) -> None:
        header = self._view.horizontalHeader()
        if header.count() == 0:
            return
        width = max(self.least, self.rest(), self.wanted)
        if header.sectionSize(0) != width:
            self._fitting = True
            try:
                header.resizeSection(0, width)
            finally:
                self._fitting = False

    def _resized(self, column: int, _old: int, new: int) -> None:
        if column != 0:
            self.fit()  # a number column was measured again
        elif not self._fitting:  # the user dragged its edge
            wanted = new if new > self.rest() else 0  # narrower: the rest again
            if wanted != self.wanted:
                self.wanted = wanted
                store({self._key: wanted})
            self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.fit()
        return False
