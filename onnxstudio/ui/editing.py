"""Shell glue for the edit room: menus, the history dock, tabs, panels and closing.

The room (``ui/edit/``) knows tabs and the canvas; this module connects it to the rest
of the window (inspector edits, run panel, titles), as ``panels.py`` does for the panels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu, QMenuBar, QWidget

from onnxstudio.model.formatting import model_title
from onnxstudio.model.index import node_by_id
from onnxstudio.ui.edit.controller import Rebuilt
from onnxstudio.ui.edit.room import EditRoom
from onnxstudio.ui.inspector.property_tree import EDIT_ROLE

if TYPE_CHECKING:
    from onnxstudio.ui.canvas.model_tab import ModelTab
    from onnxstudio.ui.main_window import MainWindow

UNSAVED_MARK = " ●"
HISTORY_WIDTH = 250


def create_room(window: MainWindow) -> EditRoom:
    room = EditRoom(window, window.current_tab, window.model_tabs)
    room.statusMessage.connect(lambda text: window.statusBar().showMessage(text, 8000))
    room.modelEdited.connect(lambda tab, rebuilt: _model_edited(window, tab, rebuilt))
    room.modifiedChanged.connect(lambda tab, _modified: update_title(window, tab))
    window.inspector.editRequested.connect(room.edit_key)
    for tree in (window.inspector.node.tree, window.inspector.model.tree):
        tree.itemDoubleClicked.connect(  # an editor opens on a value the user may change
            lambda item, _column: room.prefetch() if any(
                item.data(c, EDIT_ROLE) for c in (0, 1)) else None)
    room.act_history.triggered.connect(lambda: window.show_panel("history"))
    return room


def history_panel(room: EditRoom) -> tuple[str, QWidget, Qt.DockWidgetArea]:
    return ("History", room.history, Qt.DockWidgetArea.LeftDockWidgetArea)


def add_menus(window: MainWindow, bar: QMenuBar, file_menu: QMenu) -> QMenu:
    """The Edit menu (after File), and Save As / Save Edits as Script in File."""
    room = window.edits
    before = file_menu.actions()[file_menu.actions().index(window.commands["close"]) - 1]
    file_menu.insertAction(before, room.act_save_as)
    file_menu.insertAction(before, room.act_save_script)
    edit = QMenu("&Edit", bar)
    for act in room.edit_actions():
        if act is None:
            edit.addSeparator()
        else:
            edit.addAction(act)
    view_action = next((a for a in bar.actions() if a.text() == "&View"), None)
    bar.insertMenu(view_action, edit) if view_action else bar.addMenu(edit)
    return edit


def connect_tab(window: MainWindow, tab: ModelTab) -> None:
    tab.view.contextRequested.connect(
        lambda kind, target, pos: window.edits.context_menu(kind, target, pos)
        if tab is window.current_tab() else None)


def _model_edited(window: MainWindow, tab: ModelTab, rebuilt: Rebuilt) -> None:
    tab.replace_model(rebuilt.model, rebuilt.model_bytes)
    if tab is window.current_tab():
        window.show_in_panels(tab, rebuilt.model)
        window._on_selection(tab, [i for i in tab.view.selected_ids()
                                   if node_by_id(rebuilt.model, i) is not None])
        dock = window.docks["history"]
        if dock.isHidden():  # the first edit: the history appears, narrow beside the graph
            window.show_panel("history")
            window.resizeDocks([dock], [HISTORY_WIDTH], Qt.Orientation.Horizontal)
    update_title(window, tab)


def update_title(window: MainWindow, tab: ModelTab | None) -> None:
    """Tab and window titles mark a model with unsaved edits."""
    if tab is not None:
        index = window.tabs.indexOf(tab)
        mark = UNSAVED_MARK if window.edits.is_modified(tab) else ""
        if index >= 0 and tab.model is not None:
            window.tabs.setTabText(index, f"{model_title(tab.path)}{mark}")
            window.tabs.setTabToolTip(
                index, f"{tab.path}" + ("\nEdited: not saved yet" if mark else ""))
    current = window.current_tab()
    if current is None:
        window.setWindowTitle("onnxstudio")
        return
    mark = UNSAVED_MARK if window.edits.is_modified(current) else ""
    window.setWindowTitle(f"{model_title(current.path)}{mark} — onnxstudio")


def confirm_close_all(window: MainWindow) -> bool:
    """Before the window closes: every tab with unsaved edits is saved or discarded."""
    for tab in window.model_tabs():
        if window.edits.is_modified(tab):
            window.tabs.setCurrentWidget(tab)
            if not window.edits.confirm_close(tab):
                return False
    return True
