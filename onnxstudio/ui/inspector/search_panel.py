"""Search panel (Ctrl+F): type to find nodes, tensors and weights; Enter/F3 cycles.

The panel only finds; moving the canvas is the window's job: ``resultActivated(box_id)``
says which box to reveal and centre, ``matchesChanged(ids)`` which boxes to highlight.
Searching waits for a short pause in typing so a 100k-node model stays fluid.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.model.graph import Model
from onnxstudio.model.index import ModelIndex
from onnxstudio.model.search import SearchHit, SearchQuery, SearchSyntaxError, search
from onnxstudio.ui.widgets.path_delegate import PathDelegate

DEBOUNCE_MS = 150
HIT_ROLE = Qt.ItemDataRole.UserRole + 1
KIND_LABELS = {"node": "node", "tensor": "tensor", "initializer": "weight",
               "input": "input", "output": "output"}


class SearchPanel(QWidget):
    """Dock content; see the module docstring for the signals."""

    resultActivated = Signal(str)
    initializerActivated = Signal(str)  # a weight was picked: the window may show its values
    matchesChanged = Signal(object)  # set[str] of box ids

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: Model | None = None
        self.index: ModelIndex | None = None
        self.hits: list[SearchHit] = []

        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Find nodes, tensors, weights…")
        self.edit.setClearButtonEnabled(True)
        self.case_box = QCheckBox("Aa")
        self.case_box.setToolTip("Match case")
        self.regex_box = QCheckBox(".*")
        self.regex_box.setToolTip("Regular expression")
        self.count = QLabel()
        self.count.setEnabled(False)
        self.count.setWordWrap(True)  # one line of hint made the dock 341 px at least
        self.results = QTreeWidget()
        self.results.setColumnCount(2)
        self.results.setHeaderLabels(["Name", "Kind"])
        self.results.setRootIsDecorated(False)
        self.results.setUniformRowHeights(True)
        self.results.setAlternatingRowColors(True)
        self.results.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # Names by whole segments ("/encoder/layer.0/…/MatMul"), in the room Kind leaves:
        # Kind to its contents took 215 of BERT's 290 px and names read "/en…Mul".
        self.results.setItemDelegateForColumn(0, PathDelegate(self.results))
        header = self.results.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.results.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.results.customContextMenuRequested.connect(self._context_menu)

        row = QHBoxLayout()
        row.addWidget(self.edit, 1)
        row.addWidget(self.case_box)
        row.addWidget(self.regex_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(row)
        layout.addWidget(self.count)
        layout.addWidget(self.results, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_search)
        self.edit.textChanged.connect(self._timer.start)
        self.case_box.toggled.connect(self.run_search)
        self.regex_box.toggled.connect(self.run_search)
        self.edit.returnPressed.connect(self.next_result)
        self.results.itemActivated.connect(self._activate_item)
        self.results.itemClicked.connect(self._activate_item)
        ctx = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for keys, slot in ((QKeySequence.StandardKey.FindNext, self.next_result),
                           (QKeySequence.StandardKey.FindPrevious, self.previous_result)):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(ctx)
            shortcut.activated.connect(slot)
        self._show_count()

    # --- API -------------------------------------------------------------------

    def set_model(self, model: Model | None) -> None:
        self.model = model
        self.index = ModelIndex.of(model) if model is not None else None
        self.run_search()

    def activate(self) -> None:
        """What Ctrl+F does: focus the field with its text selected."""
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    focus_query = activate  # the name the main window's Find action calls

    def set_query(self, text: str, *, regex: bool = False, case_sensitive: bool = False) -> None:
        """Search now (no typing pause): for tests and for "find this" actions."""
        self.regex_box.setChecked(regex)
        self.case_box.setChecked(case_sensitive)
        self.edit.setText(text)
        self._timer.stop()
        self.run_search()

    def run_search(self) -> None:
        self._timer.stop()
        self.results.clear()
        self.hits = []
        error = ""
        truncated = False
        if self.model is not None and self.index is not None:
            query = SearchQuery(self.edit.text(), self.regex_box.isChecked(),
                                self.case_box.isChecked())
            try:
                result = search(self.model, query, self.index)
            except SearchSyntaxError as exc:
                error = str(exc)
            else:
                self.hits = result.hits
                truncated = result.truncated
                items = []
                for hit in self.hits:
                    item = QTreeWidgetItem([hit.name, f"{KIND_LABELS[hit.kind]} · {hit.detail}"])
                    item.setData(0, HIT_ROLE, hit)
                    item.setToolTip(0, f"{hit.name}\n{hit.kind}: {hit.detail}")
                    items.append(item)
                self.results.addTopLevelItems(items)
                self._fit_kind()
                self.matchesChanged.emit(set(result.node_ids))
        if error or not self.hits:
            self.matchesChanged.emit(set())
        self._show_count(error, truncated)

    def next_result(self) -> None:
        self._step(+1)

    def previous_result(self) -> None:
        self._step(-1)

    # --- internals -----------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_kind()

    def _fit_kind(self) -> None:
        """Kind to its contents, but never more than two fifths of the list: the names
        are what a user scans."""
        room = self.results.viewport().width()
        wanted = self.results.sizeHintForColumn(1) if self.results.topLevelItemCount() \
            else self.results.header().sectionSizeHint(1)
        self.results.setColumnWidth(1, min(wanted, max(80, room * 2 // 5)))

    def _show_count(self, error: str = "", truncated: bool = False) -> None:
        if error:
            self.count.setEnabled(True)
            self.count.setText(f"⚠ {error}")
        elif not self.edit.text():
            self.count.setEnabled(False)
            self.count.setText("Type to search by name, operator type or tensor name")
        else:
            self.count.setEnabled(False)
            n = len(self.hits)
            more = "+" if truncated else ""
            self.count.setText("No matches" if n == 0 else
                               f"{n:,}{more} match{'es' if n != 1 else ''} · "
                               "Enter/F3 next, Shift+F3 previous")

    def _step(self, delta: int) -> None:
        if self._timer.isActive():
            self.run_search()
        n = self.results.topLevelItemCount()
        if n == 0:
            return
        current = self.results.currentItem()
        row = self.results.indexOfTopLevelItem(current) if current is not None else -1
        row = (0 if delta > 0 else n - 1) if row < 0 else (row + delta) % n
        item = self.results.topLevelItem(row)
        if item is not None:
            self.results.setCurrentItem(item)
            self._activate_item(item)

    def _activate_item(self, item: QTreeWidgetItem | None, _column: int = 0) -> None:
        if item is None:
            return
        hit: SearchHit = item.data(0, HIT_ROLE)
        if hit.target:
            self.resultActivated.emit(hit.target)
        if hit.kind == "initializer":
            self.initializerActivated.emit(hit.name)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.results.itemAt(pos)
        if item is None:
            return
        hit: SearchHit = item.data(0, HIT_ROLE)
        menu = QMenu(self)
        label = "Copy node name" if hit.kind == "node" else "Copy tensor name"
        action = menu.addAction(label)
        action.triggered.connect(lambda: QGuiApplication.clipboard().setText(hit.name))
        menu.exec(self.results.viewport().mapToGlobal(pos))
