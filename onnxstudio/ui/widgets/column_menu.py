"""A table header's right-click menu to show or hide columns, remembered per table.

The side docks are ~480 px wide: the Cost table's seven columns left its node names
67 px ("…/MatMul" on every row). Less-used columns start hidden; a right-click on the
header brings any of them back, and the choice is kept for the next session.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTableView

from onnxstudio.ui.settings import app_settings, store

SEPARATOR = "|"  # between the hidden columns' titles in the setting


def title_of(view: QTableView, column: int) -> str:
    """A column's header text on one line ("Element\\nops" → "Element ops")."""
    text = view.model().headerData(column, Qt.Orientation.Horizontal)
    return " ".join(str(text or "").split())


class ColumnChooser(QObject):
    """Hides ``view``'s columns titled in ``hidden`` until the user picks otherwise in
    the header's menu (the first, naming, column is always shown); the titles hidden are
    kept under the settings ``key``."""

    def __init__(self, view: QTableView, key: str, hidden: Iterable[str] = ()) -> None:
        super().__init__(view)
        self._view, self._key = view, key
        saved = app_settings().value(key)
        chosen = str(saved).split(SEPARATOR) if isinstance(saved, str) else list(hidden)
        self.hidden = {title for title in chosen if title}
        header = view.horizontalHeader()
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._show_menu)
        self.apply()

    def apply(self) -> None:
        """Hide and show the columns as chosen (a model's columns are known up front)."""
        for column in range(1, self._view.model().columnCount()):
            self._view.setColumnHidden(column, title_of(self._view, column) in self.hidden)

    def menu(self) -> QMenu:
        """One checkable entry per column but the first."""
        menu = QMenu(self._view)
        for column in range(1, self._view.model().columnCount()):
            title = title_of(self._view, column)
            action = QAction(title, menu)
            action.setCheckable(True)
            action.setChecked(title not in self.hidden)
            action.toggled.connect(lambda on, t=title: self.set_shown(t, on))
            menu.addAction(action)
        return menu

    def set_shown(self, title: str, shown: bool) -> None:
        if shown:
            self.hidden.discard(title)
        else:
            self.hidden.add(title)
        self.apply()
        store({self._key: SEPARATOR.join(sorted(self.hidden))})

    def _show_menu(self, pos: QPoint) -> None:
        header = self._view.horizontalHeader()
        self.menu().exec(header.mapToGlobal(pos))
