"""The window's commands as one table: id, text, menu, handler, shortcut, tip.

Menus, the toolbar, which commands need an open model, and the F1 shortcut list are all
built from this table, so a new command is one row here plus its handler on the window
(``window_api.CommandHost`` lists the handlers the table calls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QComboBox, QMainWindow, QMenu, QToolBar

from onnxstudio.ui import diffing
from onnxstudio.ui.appearance import APPEARANCES

if TYPE_CHECKING:
    from onnxstudio.ui.window_api import CommandHost

Shortcut = QKeySequence.StandardKey | str | None
Needs = Literal["", "tab", "model"]


@dataclass(frozen=True)
class Command:
    """One menu entry; ``menu`` is a path ("&View/&Theme") that opens submenus."""

    id: str
    text: str
    menu: str
    handler: Callable[[], object]
    shortcut: Shortcut = None
    tip: str = ""
    needs: Needs = ""  # enabled only with a tab open, or with a loaded model
    checkable: bool = False
    group: str = ""  # checkable commands of one group exclude each other
    separator: bool = False  # a line above it in its menu
    icon_text: str = ""  # its text on the toolbar


def _clear_overlays(w: CommandHost) -> None:
    """Plain colours, and the docks that chose the colours (run insight, cost) follow."""
    w.insight.clear_overlay()
    w.cost.overlay_cleared()


@dataclass(frozen=True)
class Submenu:
    """A submenu the window fills itself (recent files, panels, providers)."""

    id: str
    text: str
    menu: str
    separator: bool = False


Entry = Command | Submenu

# The toolbar, left to right; "" is a separator.
TOOLBAR = ("open", "export", "", "fit", "zoom_in", "zoom_out", "", "expand", "collapse",
           "toggle_direction", "", "find", "run_image")


def command_table(w: CommandHost) -> list[Entry]:
    """Every command of the window, in menu order."""
    S = QKeySequence.StandardKey
    file, view, model, run, help_ = "&File", "&View", "&Model", "&Run", "&Help"
    return [
        Command("open", "&Open…", file, w.open_dialog, S.Open, "Open an ONNX model",
                icon_text="Open"),
        Submenu("recent", "Open &Recent", file),
        Command("sample", "Open &Sample Model", file, w.open_sample,
                tip="Open the bundled digit classifier"),
        Command("diff", "&Diff With…", file, partial(diffing.diff_with_dialog, w),
                "Ctrl+Shift+D", "Compare this model with another one, node by node", "model",
                separator=True),
        Command("merge", "&Merge Models…", file, w.merge_models,
                tip="Rebuild a model from split stages, or join two models"),
        Command("export", "&Export Diagram…", file, w.export_diagram, "Ctrl+E",
                "Export the graph as SVG, PNG, PDF, DOT or JSON", "model",
                icon_text="Export"),
        Command("close", "&Close", file, w.close_current_tab, S.Close, "Close this model",
                "tab", separator=True),
        Command("quit", "&Quit", file, w.close, S.Quit),
        Command("zoom_in", "Zoom &In", view, partial(w.on_tab, lambda t: t.view.zoom_in()),
                S.ZoomIn, "Zoom in", "model", icon_text="Zoom +"),
        Command("zoom_out", "Zoom &Out", view, partial(w.on_tab, lambda t: t.view.zoom_out()),
                S.ZoomOut, "Zoom out", "model", icon_text="Zoom −"),
        Command("fit", "&Fit to Window", view, partial(w.on_tab, lambda t: t.view.fit()),
                "Ctrl+0", "Show the whole graph", "model", icon_text="Fit"),
        Command("expand", "&Expand All Groups", view, partial(w.on_tab, lambda t: t.expand_all()),
                "Ctrl+Shift+E", "Expand every group and body", "model", separator=True,
                icon_text="Expand all"),
        Command("collapse", "&Collapse All Groups", view, w.collapse_all, "Ctrl+Shift+C",
                "Collapse every group", "model", icon_text="Collapse all"),
        Command("names", "Show Node &Names", view, w.toggle_names, "Ctrl+Shift+N",
                checkable=True),
        Command("edge_labels", "Show &Edge Labels", view, w.toggle_canvas_parts,
                tip="Tensor shapes along the edges", checkable=True),
        Command("minimap", "Show &Minimap", view, w.toggle_canvas_parts,
                tip="The overview in the canvas' corner when the graph does not fit",
                checkable=True),
        Command("direction_tb", "&Top to Bottom", f"{view}/&Direction",
                partial(w.set_direction, "TB"), checkable=True, group="direction"),
        Command("direction_lr", "&Left to Right", f"{view}/&Direction",
                partial(w.set_direction, "LR"), checkable=True, group="direction"),
        Command("toggle_direction", "Toggle &Direction", view, w.toggle_direction, "Ctrl+D",
                "Switch between top-to-bottom and left-to-right", icon_text="TB ⇄ LR"),
        *(Command(f"theme_{name}", name.capitalize(), f"{view}/&Theme",
                  partial(w.set_appearance, name), checkable=True, group="theme")
          for name in APPEARANCES),
        Submenu("hide", "&Hide Nodes", view),
        Submenu("panels", "&Panels", view, separator=True),
        Command("properties", "Model &Properties", model, partial(w.show_panel, "model"),
                "Ctrl+I", needs="model"),
        Command("opsets", "&Opsets", model, partial(w.show_panel, "opsets"), needs="model"),
        Command("convert", "&Convert to Opset…", model, w.convert_opset,
                tip="Save a copy of the model converted to another opset", needs="model"),
        Command("find", "&Find…", model, w.find_in_model, S.Find,
                "Find nodes, tensors and weights", "model", icon_text="Find"),
        Command("between", "Select &Between", model, w.select_between, "Ctrl+Shift+B",
                "With two nodes selected: select every node on the paths from one to the "
                "other", "model"),
        Command("extract", "E&xtract Selection…", model, w.extract_selection, "Ctrl+Shift+X",
                "Save the selected nodes as a new model", "model"),
        Command("split", "S&plit into Stages…", model, w.split_into_stages,
                tip="Cut the model into N pipeline stages: preview, then write", needs="model"),
        Command("cost", "Cost &Table", model, w.cost.show_cost, needs="model",
                tip="MACs, parameters and memory per node and scope; colour the graph by them"),
        Command("placement", "&Where It Runs", model, w.cost.show_placement, needs="model",
                tip="Which execution provider and kernel run each node (onnxruntime ≥ 1.24)"),
        Command("optimised", "Show &Optimised Graph", model, partial(diffing.show_optimised, w),
                tip="What onnxruntime runs: its optimised graph (Run panel's provider and "
                    "level), diffed against this model", separator=True),
        Command("run_image", "Run &Image…", run, w.run_image_dialog, "Ctrl+R",
                "Run the model on an image", "model", icon_text="Run image"),
        Command("run_random", "Run with &Random Inputs", run, w.run_random, "Ctrl+Shift+R",
                needs="model"),
        Command("benchmark", "&Benchmark", run, w.benchmark, needs="model"),
        Command("profile", "&Profile Run", run, w.insight.start_profile, "Ctrl+Shift+P",
                "Time every node of the last input and show a heatmap", "model",
                separator=True),
        Command("tensors", "Show &Tensor Values", run, partial(w.show_panel, "tensor"),
                "Ctrl+T", "After a run, click a node or edge to see its tensor"),
        Command("capture_all", "Capture &All Tensors", run, w.insight.capture_all,
                tip="Keep every intermediate tensor of the last run", needs="model"),
        Command("compare", "&Compare Runs", run, w.insight.start_compare, "Ctrl+Shift+M",
                "Run the last input on two configurations and find where they differ",
                "model"),
        Command("clear_overlay", "C&lear Heatmap", run, partial(_clear_overlays, w),
                tip="Plain category colours on the canvas again"),
        Submenu("providers", "Execution &Provider", run, separator=True),
        Command("shortcuts", "&Keyboard Shortcuts", help_, w.show_shortcuts, "F1"),
        Command("about", "&About onnxstudio", help_, w.show_about),
    ]


@dataclass
class Built:
    """What ``build`` made from the table, by id."""

    actions: dict[str, QAction]
    submenus: dict[str, QMenu]
    toolbar: QToolBar


def _action(window: QMainWindow, c: Command) -> QAction:
    action = QAction(c.text, window)
    if c.shortcut is not None:
        action.setShortcut(QKeySequence(c.shortcut))
    action.setCheckable(c.checkable)
    if c.tip:
        action.setStatusTip(c.tip)
        action.setToolTip(f"{c.tip} ({action.shortcut().toString()})" if c.shortcut
                          else c.tip)
    if c.icon_text:
        action.setIconText(c.icon_text)
    action.triggered.connect(lambda _checked=False, run=c.handler: run())
    return action


def build(window: QMainWindow, table: Sequence[Entry]) -> Built:
    """Create the actions, the menu bar (in table order) and the toolbar."""
    actions: dict[str, QAction] = {}
    submenus: dict[str, QMenu] = {}
    menus: dict[str, QMenu] = {}
    groups: dict[str, QActionGroup] = {}

    def menu_at(path: str) -> QMenu:
        if path not in menus:
            parent, _, title = path.rpartition("/")
            menus[path] = (menu_at(parent).addMenu(title) if parent
                           else window.menuBar().addMenu(title))
        return menus[path]

    for entry in table:
        menu = menu_at(entry.menu)
        if entry.separator:
            menu.addSeparator()
        if isinstance(entry, Submenu):
            submenus[entry.id] = menu.addMenu(entry.text)
            continue
        action = actions[entry.id] = _action(window, entry)
        if entry.group:
            groups.setdefault(entry.group, QActionGroup(window)).addAction(action)
        menu.addAction(action)

    toolbar = QToolBar("Main")
    toolbar.setObjectName("toolbar_main")
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    for key in TOOLBAR:
        if key:
            toolbar.addAction(actions[key])
        else:
            toolbar.addSeparator()
    window.addToolBar(toolbar)
    return Built(actions, submenus, toolbar)


def mirror_combo(menu: QMenu, combo: QComboBox, label: Callable[[str], str]) -> None:
    """A combo box's choices as checkable menu entries, kept in step both ways (the run
    panel's execution provider in the Run menu)."""
    group = QActionGroup(menu)
    for i in range(combo.count()):
        name = combo.itemText(i)
        action = menu.addAction(label(name))
        action.setCheckable(True)
        action.setChecked(name == combo.currentText())
        action.triggered.connect(lambda _=False, n=name: combo.setCurrentText(n))
        group.addAction(action)

    def follow(name: str) -> None:
        for action in group.actions():
            action.setChecked(action.text() == label(name))

    combo.currentTextChanged.connect(follow)


def update_enabled(table: Sequence[Entry], actions: dict[str, QAction], has_tab: bool,
                   has_model: bool) -> None:
    for entry in table:
        if isinstance(entry, Command) and entry.needs:
            actions[entry.id].setEnabled(has_model if entry.needs == "model" else has_tab)


def shortcut_rows(table: Sequence[Entry], actions: dict[str, QAction],
                  more: Sequence[QAction] = ()) -> list[tuple[str, str]]:
    """(command, key) for every command with a shortcut, in menu order, then ``more``
    (the edit room's Undo, Redo, Save As...): F1's list."""
    found = [(entry.text, actions[entry.id]) for entry in table if isinstance(entry, Command)]
    found += [(action.text(), action) for action in more]
    return [(text.replace("&", "").rstrip("…"),
             "  ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                       for k in action.shortcuts()))
            for text, action in found if not action.shortcut().isEmpty()]
