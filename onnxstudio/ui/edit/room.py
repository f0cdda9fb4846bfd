"""The Edit menu, the canvas' context menus and the prompts behind them, for every tab.

One EditController per tab; a QUndoGroup makes Undo/Redo (and the history view) follow
the current tab, each action named after the edit it undoes. The shell wires the room to
the window: it hands over the current tab, and refreshes the tab and panels when
``modelEdited`` fires.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPoint, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMenu, QMessageBox, QWidget

from onnxstudio.errors import EditError, OnnxStudioError
from onnxstudio.model import Model, Node
from onnxstudio.model.edit import load_script
from onnxstudio.model.index import node_by_id
from onnxstudio.model.schemas import normalize_domain, operator_schema
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.edit.controller import EditController, Rebuilt
from onnxstudio.ui.edit.history import HistoryPanel
from onnxstudio.ui.edit.requests import dims_edits, edits_for_key, node_ref

SCRIPT_FILTER = "Edit scripts (*.json);;All files (*)"


class EditRoom(QObject):
    """Everything editing adds to the window."""

    modelEdited = Signal(object, object)  # ModelTab, Rebuilt
    modifiedChanged = Signal(object, bool)  # ModelTab, has unsaved edits
    statusMessage = Signal(str)

    def __init__(self, window: QWidget, current_tab: Callable[[], ModelTab | None],
                 open_tabs: Callable[[], list[ModelTab]]) -> None:
        super().__init__(window)
        self._window, self._current_tab, self._open_tabs = window, current_tab, open_tabs
        self.group = QUndoGroup(self)
        self.controllers: dict[ModelTab, EditController] = {}
        self.history = HistoryPanel(self.group)
        self._build_actions()

    # ---------------------------------------------------------------- per tab
    def controller(self, tab: ModelTab) -> EditController:
        found = self.controllers.get(tab)
        if found is None:
            found = EditController(tab.path, tab, self)
            found.modelChanged.connect(self._on_rebuilt)
            found.refused.connect(self._refused)
            found.failed.connect(self.statusMessage)
            found.modifiedChanged.connect(self.modifiedChanged)
            self.group.addStack(found.stack)
            self.controllers[tab] = found
            if tab is self._current_tab():
                self.group.setActiveStack(found.stack)
        return found

    def tab_activated(self, tab: ModelTab | None) -> None:
        found = self.controllers.get(tab) if tab is not None else None
        self.group.setActiveStack(found.stack if found is not None else None)  # type: ignore[arg-type]  # None: no active stack
        self.history.show_report(found.report if found else None,
                                 len(found.edits) if found else 0)
        self._update_actions()

    def prefetch(self) -> None:
        """The current tab's model is about to be edited: open its session meanwhile."""
        tab = self._current_tab()
        if tab is not None and tab.model is not None:
            self.controller(tab).prefetch()

    def tab_closed(self, tab: ModelTab) -> None:
        found = self.controllers.pop(tab, None)
        if found is not None:
            self.group.removeStack(found.stack)
            found.deleteLater()

    def is_modified(self, tab: ModelTab) -> bool:
        found = self.controllers.get(tab)
        return found is not None and found.modified

    def _on_rebuilt(self, tab: ModelTab, rebuilt: Rebuilt) -> None:
        controller = self.controllers.get(tab)
        if controller is None:
            return
        self.modelEdited.emit(tab, rebuilt)
        if tab is self._current_tab():
            self.history.show_report(rebuilt.report, len(controller.edits))
        self._update_actions()

    def _refused(self, message: str, title: str = "Edit not applied") -> None:
        QMessageBox.warning(self._window, title, message)

    # ---------------------------------------------------------------- requests
    def apply(self, edits: list[dict[str, Any]], label: str | None = None) -> bool:
        tab = self._current_tab()
        if tab is None or tab.model is None or not edits:
            return False
        controller = self.controller(tab)
        if len(edits) == 1:
            return controller.apply(edits[0])
        return controller.apply_script(edits, label or f"{len(edits)} edits")

    def edit_key(self, key: str, text: str) -> None:
        """A value edited in place in the Node or Model panel."""
        tab = self._current_tab()
        if tab is None or tab.model is None:
            return
        try:
            edits = edits_for_key(tab.model, key, text)
        except (EditError, ValueError) as exc:
            self._refused(str(exc))
            return
        self.apply(edits, f"Set {key.rpartition(':')[2]}")

    def _ask(self, title: str, label: str, text: str = "") -> str | None:
        value, ok = QInputDialog.getText(self._window, title, label, text=text)
        return value.strip() if ok and value.strip() else None

    def _pick(self, title: str, label: str, items: list[str]) -> str | None:
        if len(items) == 1:
            return items[0]
        value, ok = QInputDialog.getItem(self._window, title, label, items, 0, False)
        return value if ok else None

    def rename(self, kind: str, old: str) -> None:
        new = self._ask(f"Rename {kind}", f"New name for {kind} '{old}':", old)
        if new and new != old:
            self.apply([{"op": "rename", "kind": kind, "from": old, "to": new}])

    def set_dims(self, model: Model, side: str, name: str) -> None:
        value = model.graph.values.get(name)
        shape = value.type.shape if value is not None else None
        if shape is None:
            self._refused(f"'{name}' has no known shape to edit")
            return
        current = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
        text = self._ask("Set dimensions", f"Dimensions of '{name}' (a size, a name such "
                         "as batch, or ?):", current)
        if text:
            try:
                self.apply(dims_edits(model, side, name, text), f"Set dims of {name}")
            except EditError as exc:
                self._refused(str(exc))

    @staticmethod
    def attribute_names(model: Model, node: Node) -> list[str]:
        """What can be set: the schema's attributes, or a custom node's own."""
        schema = operator_schema(node.op_type, node.domain,
                                 model.opset_imports.get(normalize_domain(node.domain)))
        return sorted(schema.attributes) if schema is not None else \
            [a.name for a in node.attributes]

    def set_attribute(self, model: Model, node_id: str) -> None:
        node = node_by_id(model, node_id)
        if node is None:
            return
        names = self.attribute_names(model, node)
        if not names:
            self._refused(f"{node.op_type} has no attributes")
            return
        name = self._pick("Set attribute", f"Attribute of {node.label}:", names)
        current = node.attribute(name) if name else None
        value = self._ask("Set attribute", f"{node.op_type}.{name} =",
                          "" if current is None else repr(current.value)) if name else None
        if name and value is not None:
            self.edit_key(f"attr:{node_id}:{name}", value)

    def replace_weight(self, names: list[str]) -> None:
        name = self._pick("Replace weight", "Weight to replace:", names) if names else None
        if not name:
            return
        path, _ = QFileDialog.getOpenFileName(self._window, f"Values for {name}", "",
                                              "NumPy arrays (*.npy)")
        if path:
            self.apply([{"op": "set_initializer", "name": name, "npy": path}])

    def set_metadata(self) -> None:
        text = self._ask("Set metadata", "key = value (an empty value removes the key):")
        if text:
            key, _, value = text.partition("=")
            if key.strip():
                self.apply([{"op": "set_metadata", "key": key.strip(),
                             "value": value.strip() or None}])

    # ---------------------------------------------------------------- context menus
    def context_menu(self, kind: str, target: str, pos: QPoint) -> None:
        """Right-click on the canvas: ``kind`` "box" (a box id) or "edge" (a tensor)."""
        tab = self._current_tab()
        if tab is None or tab.model is None:
            return
        self.prefetch()
        menu = QMenu(self._window)
        self.fill_context_menu(menu, tab.model, kind, target)
        menu.addSeparator()
        menu.addAction(self.act_undo)
        menu.addAction(self.act_redo)
        menu.exec(pos)

    def fill_context_menu(self, menu: QMenu, model: Model, kind: str, target: str) -> None:
        def add(text: str, slot: Callable[[], object]) -> None:
            menu.addAction(text).triggered.connect(lambda _=False: slot())

        if kind == "edge":
            add(f"Rename Tensor '{target}'…", lambda: self.rename("tensor", target))
            if target not in model.graph.outputs:
                add("Add as Model Output", lambda: self.apply(
                    [{"op": "add_output", "tensor": target}]))
            return
        if target.startswith(("in:", "out:")):
            side, _, name = target.partition(":")
            what = "input" if side == "in" else "output"
            add(f"Rename {what.capitalize()}…", lambda: self.rename(what, name))
            add("Set Dimensions…", lambda: self.set_dims(model, side, name))
            if side == "out":
                add("Remove Output", lambda: self.apply(
                    [{"op": "remove_output", "name": name}]))
            return
        node = node_by_id(model, target)
        if node is None:
            return
        try:
            ref = node_ref(model, target)
        except EditError as exc:
            menu.addAction(str(exc)).setEnabled(False)
            return
        add("Rename Node…", lambda: self.rename("node", ref))
        if self.attribute_names(model, node):
            add("Set Attribute…", lambda: self.set_attribute(model, target))
        add("Remove Node (Bypass)", lambda: self.apply([{"op": "remove_node", "node": ref}]))
        for name in [o for o in node.outputs if o and o not in model.graph.outputs]:
            add(f"Add Output '{name}'", lambda n=name: self.apply(  # type: ignore[misc]
                [{"op": "add_output", "tensor": n}]))
        weights = [i for i in node.inputs if i in model.graph.initializers]
        if weights:
            add("Replace Weight from .npy…", lambda: self.replace_weight(weights))

    # ---------------------------------------------------------------- actions
    def _build_actions(self) -> None:
        w = self._window
        self.act_undo = self.group.createUndoAction(w, "&Undo")
        self.act_undo.setShortcut(QKeySequence.StandardKey.Undo)
        self.act_redo = self.group.createRedoAction(w, "&Redo")
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])

        def action(text: str, slot: Callable[[], object], shortcut: str = "",
                   tip: str = "") -> QAction:
            act = QAction(text, w)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
            act.setStatusTip(tip)
            act.triggered.connect(lambda _=False: slot())
            return act

        self.act_edit_selected = action("&Edit Selection…", self._edit_selection, "F2",
                                        "Edit the selected node, input or output")
        self.act_metadata = action("Set &Metadata…", self.set_metadata,
                                   tip="Add, change or remove a metadata entry")
        self.act_weight = action("Replace &Weight from .npy…", self._replace_any_weight,
                                 tip="Replace an initializer's values (same dtype)")
        self.act_apply_script = action("&Apply Script…", self.apply_script_dialog,
                                       tip="Apply a saved edit script to this model")
        self.act_save_script = action("Save Edits as &Script…", self.save_script_dialog,
                                      tip="Save the edits as JSON for onnxstudio edit")
        self.act_save_as = action("Save &As…", self.save_as_dialog, "Ctrl+Shift+S",
                                  "Save the edited model to a new file")
        self.act_history = action("Edit &History", lambda: None, tip="Show every edit")

    def edit_actions(self) -> list[QAction | None]:
        """The Edit menu, top to bottom (None: a separator). Save As and Save Edits as
        Script are in the File menu only: in both menus, one looked like two commands."""
        return [self.act_undo, self.act_redo, None, self.act_edit_selected,
                self.act_metadata, self.act_weight, None, self.act_apply_script,
                None, self.act_history]

    def shortcut_actions(self) -> list[QAction]:
        """Every action of the room, for the F1 list (Undo, Redo and Save As among them)."""
        return [a for a in self.edit_actions() if a is not None] + [self.act_save_script,
                                                                     self.act_save_as]

    def _update_actions(self) -> None:
        tab = self._current_tab()
        has_model = tab is not None and tab.model is not None
        edited = tab is not None and bool(self.controllers.get(tab)
                                          and self.controllers[tab].edits)
        for act in (self.act_edit_selected, self.act_metadata, self.act_weight,
                    self.act_apply_script):
            act.setEnabled(has_model)
        self.act_save_script.setEnabled(edited)
        self.act_save_as.setEnabled(has_model)

    def _edit_selection(self) -> None:
        tab = self._current_tab()
        if tab is None or tab.model is None:
            return
        ids = tab.view.selected_ids()
        if not ids:
            self.statusMessage.emit("Select a node, input or output first "
                                     "(or right-click it)")
            return
        self.prefetch()
        menu = QMenu(self._window)
        self.fill_context_menu(menu, tab.model, "box", ids[0])
        point = tab.view.map_box_to_view(ids[0])
        menu.exec(tab.view.viewport().mapToGlobal(point or QPoint(0, 0)))

    def _replace_any_weight(self) -> None:
        tab = self._current_tab()
        if tab is not None and tab.model is not None:
            self.replace_weight(sorted(tab.model.graph.initializers))

    # ---------------------------------------------------------------- files
    def apply_script_dialog(self) -> None:
        tab = self._current_tab()
        if tab is None or tab.model is None:
            return
        path, _ = QFileDialog.getOpenFileName(self._window, "Apply edit script",
                                              str(tab.path.parent), SCRIPT_FILTER)
        if not path:
            return
        try:
            edits = load_script(path)
        except EditError as exc:
            self._refused(str(exc))
            return
        self.apply(edits, f"Apply {Path(path).name}")

    def save_script_dialog(self) -> None:
        tab = self._current_tab()
        controller = self.controllers.get(tab) if tab is not None else None
        if tab is None or controller is None or not controller.edits:
            return
        default = tab.path.with_name(f"{tab.path.stem}-edits.json")
        path, _ = QFileDialog.getSaveFileName(self._window, "Save edits as script",
                                              str(default), SCRIPT_FILTER)
        if path:
            try:
                Path(path).write_text(controller.script(), encoding="utf-8")
            except OSError as exc:
                self._refused(f"{Path(path).name}: could not be written ({exc.strerror})")
                return
            self.statusMessage.emit(f"Saved {len(controller.edits)} edits to {path}")

    def save_as_dialog(self, tab: ModelTab | None = None) -> bool:
        """Ask where, then save; False when cancelled or refused."""
        tab = tab or self._current_tab()
        if tab is None or tab.model is None:
            return False
        default = tab.path.with_name(f"{tab.path.stem}-edited.onnx")
        path, _ = QFileDialog.getSaveFileName(self._window, "Save edited model as",
                                              str(default), "ONNX models (*.onnx)")
        return bool(path) and self.save_as(tab, Path(path))

    def save_as(self, tab: ModelTab, dest: Path) -> bool:
        controller = self.controller(tab)
        if controller.report.cannot_run and QMessageBox.question(
                self._window, "The edited model does not run",
                f"onnxruntime cannot run the edited {tab.path.name} (the original runs):\n\n"
                f"{controller.report.cannot_run}\n\nSave it anyway?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel) != QMessageBox.StandardButton.Save:
            return False
        others = [t.path for t in self._open_tabs() if t is not tab]
        try:
            saved = controller.save_as(dest, protect=others)
        except OnnxStudioError as exc:
            self._refused(str(exc), "Not saved")
            return False
        data = f" and {saved.data_path.name}" if saved.data_path else ""
        self.statusMessage.emit(f"Saved {saved.path.name}{data}")
        return True

    def confirm_close(self, tab: ModelTab) -> bool:
        """Before a tab with unsaved edits closes: save, discard or stay."""
        if not self.is_modified(tab):
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "Unsaved edits",
                          f"{tab.path.name} has edits that are not saved.",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self._window)
        box.setInformativeText("Save them to a new file first? The original file is never "
                               "written.")
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save_as_dialog(tab)
        return answer == QMessageBox.StandardButton.Discard
