"""Shell glue for the edit room: menus, tabs, panels, titles and closing.

The room (``ui/edit/``) knows tabs and the canvas, and is registered with its History
dock in ``panel_registry.py``; this module connects its edits to the rest of the window
(the panels, the tab and window titles), seeing the window as ``window_api.EditHost``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMenuBar

from onnxstudio.model.formatting import model_title
from onnxstudio.model.index import node_by_id
from onnxstudio.ui.edit.controller import Rebuilt
from onnxstudio.ui.edit.room import EditRoom
from onnxstudio.ui.tasks import next_turn

if TYPE_CHECKING:
    from onnxstudio.ui.canvas.model_tab import ModelTab
    from onnxstudio.ui.window_api import EditHost, WithEdits

UNSAVED_MARK = " ●"
HISTORY_WIDTH = 250


def connect_room(window: EditHost, room: EditRoom) -> None:
    """An edit shows in the tab, the panels and the titles."""
    room.modelEdited.connect(lambda tab, rebuilt: _model_edited(window, tab, rebuilt))
    room.modifiedChanged.connect(lambda tab, _modified: update_title(window, tab))


def add_menus(room: EditRoom, bar: QMenuBar, file_menu: QMenu, close: QAction) -> QMenu:
    """The Edit menu (after File), and Save As / Save Edits as Script in File (above
    ``close``)."""
    before = file_menu.actions()[file_menu.actions().index(close) - 1]
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


def connect_tab(window: WithEdits, tab: ModelTab) -> None:
    tab.view.contextRequested.connect(
        lambda kind, target, pos: window.edits.context_menu(kind, target, pos)
        if tab is window.current_tab() else None)


def _model_edited(window: EditHost, tab: ModelTab, rebuilt: Rebuilt) -> None:
    """The tab takes the edited model (its re-layout starts) now; the panels fill a turn
    later and the history appears the turn after: all in this handler, dag100k's edit
    froze the window 40 ms (BERT-96's 28), most of it the panels."""
    tab.replace_model(rebuilt.model, rebuilt.model_bytes)
    update_title(window, tab)
    next_turn(tab, lambda: _panels_follow(window, tab))
    next_turn(tab, lambda: _history_shown(window, tab), turns=2)


def _panels_follow(window: EditHost, tab: ModelTab) -> None:
    """The panels show the tab's model (the newest, when edits landed meanwhile)."""
    model = tab.model
    if tab is not window.current_tab() or model is None:
        return  # another tab is shown: switching back fills the panels
    window.show_in_panels(tab, model)
    window.on_selection(tab, [i for i in tab.view.selected_ids()
                               if node_by_id(model, i) is not None])


def _history_shown(window: EditHost, tab: ModelTab) -> None:
    dock = window.docks["history"]
    if tab is window.current_tab() and dock.isHidden():
        # the first edit: the history appears, narrow beside the graph
        window.show_panel("history")
        window.resizeDocks([dock], [HISTORY_WIDTH], Qt.Orientation.Horizontal)


def update_title(window: EditHost, tab: ModelTab | None) -> None:
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


def confirm_close_all(window: WithEdits) -> bool:
    """Before the window closes: every tab with unsaved edits is saved or discarded."""
    for tab in window.model_tabs():
        if window.edits.is_modified(tab):
            window.tabs.setCurrentWidget(tab)
            if not window.edits.confirm_close(tab):
                return False
    return True
