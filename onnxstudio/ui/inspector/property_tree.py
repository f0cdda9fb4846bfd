"""A property list (name, value, type) with sections, clickable link rows and copy menus.

Shared by the node and model panels so they look alike: bold section rows, names on
the left, values on the right (wrapping), links drawn like links and emitted as
``linkActivated(target)``; right-click offers to copy the name, the value and whatever
extra texts the row was given (a tensor name, attributes as JSON...). A row given an
edit key is edited in place (double-click or F2) and emitted as ``valueEdited(key, text)``;
what the text means is the listener's business.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QMouseEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QMenu,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QWidget,
)

from onnxstudio.ui.widgets.tables import delegate_text_padding

LINK_ROLE = Qt.ItemDataRole.UserRole + 1
COPY_ROLE = Qt.ItemDataRole.UserRole + 2
EDIT_ROLE = Qt.ItemDataRole.UserRole + 3  # per column: the key emitted when it is edited


_BREAK_AFTER = re.compile(r"([/_,×\[(]|\.(?!\d))(?=\S)")  # not inside a number (1.5)


def breakable(text: str) -> str:
    """Display-only: allow line breaks inside paths and identifiers (after / _ . , ×)."""
    return _BREAK_AFTER.sub("\\1\u200b", text)


class _WrappingDelegate(QStyledItemDelegate):
    """Row heights that follow the value column's width: QTreeView alone does not re-wrap
    text. The value column's only: as every column's, it made Qt call Python for each
    cell it measured (a model's panel filling froze the window 10 ms more)."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self._tree = tree

    def sizeHint(self, option: QStyleOptionViewItem,
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        width = self._tree.columnWidth(1) - 8
        text = str(index.data() or "")
        if width <= 20 or not text:
            return size
        font = index.data(Qt.ItemDataRole.FontRole) or option.font
        rect = QFontMetrics(font).boundingRect(
            QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), breakable(text))
        return QSize(size.width(), max(size.height(), rect.height() + 4))

    def initStyleOption(self, option: QStyleOptionViewItem,
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.text = breakable(option.text)


class PropertyTree(QTreeWidget):
    """Sections of name/value rows; see the module docstring."""

    linkActivated = Signal(str)
    valueEdited = Signal(str, str)  # edit key, new text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setColumnCount(3)
        self.setHeaderHidden(True)
        self.setWordWrap(True)
        self.setItemDelegateForColumn(1, _WrappingDelegate(self))
        self.setUniformRowHeights(False)
        self.setRootIsDecorated(True)
        self.setIndentation(12)
        self.setAlternatingRowColors(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.itemClicked.connect(self._clicked)
        self.itemActivated.connect(self._clicked)
        self.setMouseTracking(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.itemDoubleClicked.connect(self._start_edit)
        self.itemChanged.connect(self._edited)
        self._editing: tuple[QTreeWidgetItem, int, str] | None = None
        self._unspanned: list[QTreeWidgetItem] = []
        self._wanted: tuple[int, int] | None = None  # names' and types' widths, fitted

    # --- building ---------------------------------------------------------------

    def clear(self) -> None:
        self._unspanned.clear()
        super().clear()

    def add_section(self, title: str, count: int | None = None) -> QTreeWidgetItem:
        """A bold section row; it spans the name and value columns once the tree is
        filled (``fit_name_column``): spanning lays out every row, so spanning each
        section as it came made filling the model panel quadratic."""
        text = title if count is None else f"{title} ({count})"
        item = QTreeWidgetItem(self, [text])
        self._unspanned.append(item)
        font = QFont(item.font(0))
        font.setBold(True)
        item.setFont(0, font)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        item.setExpanded(True)
        return item

    def add_row(self, parent: QTreeWidgetItem | None, name: str, value: str = "",
                kind: str = "", *, link: str | None = None, tooltip: str | None = None,
                copy: list[tuple[str, str]] | None = None,
                muted: bool = False, edit: str | None = None,
                edit_name: str | None = None) -> QTreeWidgetItem:
        """A name/value/type row; ``link`` makes it clickable, ``copy`` adds menu entries,
        ``edit`` / ``edit_name`` make the value / the name editable under that key."""
        item = QTreeWidgetItem(parent if parent is not None else self, [name, value, kind])
        item.setToolTip(0, tooltip or name)
        item.setToolTip(1, tooltip or value)
        item.setToolTip(2, tooltip or kind)
        for column, key in ((1, edit), (0, edit_name)):
            if key:
                item.setData(column, EDIT_ROLE, key)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                item.setToolTip(column, f"{item.toolTip(column)}\n(double-click to edit)")
        palette = self.palette()
        muted_brush = QBrush(palette.color(QPalette.ColorRole.PlaceholderText))
        item.setForeground(2, muted_brush)
        if muted:
            item.setForeground(0, muted_brush)
            item.setForeground(1, muted_brush)
        if link:
            item.setData(0, LINK_ROLE, link)
            item.setForeground(1, QBrush(palette.color(QPalette.ColorRole.Link)))
        if copy:
            item.setData(0, COPY_ROLE, copy)
        item.setExpanded(True)
        return item

    VALUE_SHARE = 0.35  # of the width the values keep, at least: names give way to them

    def fit_name_column(self, maximum: int = 200, type_maximum: int = 90) -> None:
        """The tree is filled: sections span their row; names and types as wide as they
        need up to a cap, so values get the rest."""
        for item in self._unspanned:
            item.setFirstColumnSpanned(True)
        self._unspanned.clear()
        self._wanted = (min(maximum, self._names_width()),
                        min(type_maximum, self.sizeHintForColumn(2) + 4))
        self._fit_widths()

    def _names_width(self) -> int:
        """What the widest name needs, its indentation included (``sizeHintForColumn``
        leaves that out, which cut "Image.NominalPixelRange" in a panel with room)."""
        margin = delegate_text_padding(self) + 1
        widest = 0
        it = QTreeWidgetItemIterator(self)
        while (item := it.value()) is not None:
            it += 1
            parent, depth = item.parent(), 1 if self.rootIsDecorated() else 0
            if parent is None and item.isFirstColumnSpanned():
                continue  # a section's title spans the row
            while parent is not None:
                depth, parent = depth + 1, parent.parent()
            text = QFontMetrics(item.font(0)).horizontalAdvance(item.text(0))
            widest = max(widest, depth * self.indentation() + text + margin)
        return widest

    def _fit_widths(self) -> None:
        """Names and types their wanted widths, unless that leaves the values less than
        their share: then the names give way (elided; the tooltip has them). Long
        metadata keys once left the values 50 px of a 300 px panel."""
        if self._wanted is None:
            return
        name, kind = self._wanted
        width = self.viewport().width()
        room = width - kind - int(width * self.VALUE_SHARE)
        self.setColumnWidth(0, max(60, min(name, room)))
        self.setColumnWidth(2, kind)

    # --- reacting ----------------------------------------------------------------

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        link = item.data(0, LINK_ROLE)
        if link:
            self.linkActivated.emit(str(link))

    def _start_edit(self, item: QTreeWidgetItem, column: int) -> None:
        column = column if item.data(column, EDIT_ROLE) else (
            1 if item.data(1, EDIT_ROLE) else 0 if item.data(0, EDIT_ROLE) else -1)
        if column < 0:
            return
        self._editing = (item, column, item.text(column))
        self.editItem(item, column)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        item = self.currentItem()
        if event.key() == Qt.Key.Key_F2 and item is not None:
            self._start_edit(item, 1)
            return
        super().keyPressEvent(event)

    def _edited(self, item: QTreeWidgetItem, column: int) -> None:
        if self._editing is None or self._editing[:2] != (item, column):
            return
        before = self._editing[2]
        self._editing = None
        key, text = item.data(column, EDIT_ROLE), item.text(column).strip()
        if key and text and text != before:
            self.valueEdited.emit(str(key), text)

    def row_texts(self) -> list[tuple[str, str, str]]:
        """Every row as (name, value, type), depth first: what the user reads (tests use it)."""
        out: list[tuple[str, str, str]] = []

        def walk(item: QTreeWidgetItem | None) -> None:
            if item is None:
                return
            out.append((item.text(0), item.text(1), item.text(2)))
            for i in range(item.childCount()):
                walk(item.child(i))

        for i in range(self.topLevelItemCount()):
            walk(self.topLevelItem(i))
        return out

    def find_row(self, name: str, section: str | None = None) -> QTreeWidgetItem | None:
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top is None or (section is not None and not top.text(0).startswith(section)):
                continue
            stack = [top.child(j) for j in range(top.childCount())]
            while stack:
                item = stack.pop(0)
                if item is None:
                    continue
                if item.text(0) == name:
                    return item
                stack.extend(item.child(j) for j in range(item.childCount()))
        return None

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Re-share the width, and re-measure rows so wrapped values get the height the
        new width needs."""
        super().resizeEvent(event)
        self._fit_widths()
        self.scheduleDelayedItemsLayout()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        """A pointing hand over link rows, as over links in a browser."""
        item = self.itemAt(event.position().toPoint())
        linked = item is not None and bool(item.data(0, LINK_ROLE))
        self.viewport().setCursor(Qt.CursorShape.PointingHandCursor if linked
                                  else Qt.CursorShape.ArrowCursor)
        super().mouseMoveEvent(event)

    def copy_entries(self, item: QTreeWidgetItem) -> list[tuple[str, str]]:
        entries = list(item.data(0, COPY_ROLE) or [])
        if item.text(1):
            entries.append(("Copy value", item.text(1)))
        if item.text(0) and item.parent() is not None:
            entries.append(("Copy name", item.text(0)))
        return entries

    def _context_menu(self, pos: QPoint) -> None:
        item = self.itemAt(pos)
        if item is None:
            return
        entries = self.copy_entries(item)
        if not entries:
            return
        menu = QMenu(self)
        for label, text in entries:
            action = menu.addAction(label)
            action.triggered.connect(lambda _=False, t=text: QGuiApplication.clipboard().setText(t))
        menu.exec(self.viewport().mapToGlobal(pos))
