"""The View menu's choices for every canvas: edge labels, the minimap and the kinds of
node hidden (model/hiding.py); remembered in QSettings, applied to each tab as it opens."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTabWidget

from onnxstudio.model.hiding import HIDE_KINDS
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.settings import app_settings, store


def _flag(value: object) -> bool:
    return value in (True, "true")


class CanvasChoices:
    """What View says every canvas shows; a diff's panes never show a minimap."""

    def __init__(self) -> None:
        settings = app_settings()
        self.edge_labels = _flag(settings.value("show_edge_labels", True))
        self.minimap = _flag(settings.value("show_minimap", True))
        self.hidden = frozenset(k for k in str(settings.value("hide_nodes", "") or "").split(",")
                                if k in HIDE_KINDS)

    def bind(self, commands: dict[str, QAction], hide_menu: QMenu,
             tabs: Callable[[], list[ModelTab]]) -> dict[str, QAction]:
        """Check the View menu's entries as remembered; returns Hide Nodes' entries."""
        commands["edge_labels"].setChecked(self.edge_labels)
        commands["minimap"].setChecked(self.minimap)
        return fill_hide_menu(hide_menu, HIDE_KINDS, self.hidden,
                              lambda kinds: self.set_hidden(kinds, tabs()))

    def apply(self, tab: ModelTab, minimap: bool = True) -> None:
        """On ``tab``'s canvas (a new one takes the hidden kinds before its first layout;
        ``minimap`` False: a diff pane)."""
        tab.view.show_edge_labels = self.edge_labels
        if tab.model is None:
            tab.hidden_kinds = self.hidden
        if minimap:
            tab.view.minimap.allowed = self.minimap
            tab.view.minimap.view_changed()
        tab.view.viewport().update()

    def set_parts(self, commands: dict[str, QAction], tabs: QTabWidget) -> None:
        """Show Edge Labels / Show Minimap as ``commands`` say, on every canvas."""
        edge_labels, minimap = (commands[k].isChecked() for k in ("edge_labels", "minimap"))
        self.edge_labels, self.minimap = edge_labels, minimap
        store({"show_edge_labels": edge_labels, "show_minimap": minimap})
        for i in range(tabs.count()):
            tab = tabs.widget(i)
            for canvas in tab.tabs() if isinstance(tab, DiffTab) else [tab]:
                if isinstance(canvas, ModelTab):
                    self.apply(canvas, minimap=not isinstance(tab, DiffTab))

    def set_hidden(self, kinds: frozenset[str], tabs: Iterable[ModelTab]) -> None:
        """Hide Nodes: every canvas lays out again without ``kinds``."""
        self.hidden = kinds
        store({"hide_nodes": ",".join(sorted(kinds))})
        for tab in tabs:
            tab.set_hidden_kinds(kinds)


def fill_hide_menu(menu: QMenu, kinds: dict[str, str], hidden: frozenset[str],
                   changed: Callable[[frozenset[str]], None]) -> dict[str, QAction]:
    """View → Hide Nodes: one checkable entry per kind; ``changed`` gets the new set."""
    entries: dict[str, QAction] = {}

    def toggled() -> None:
        changed(frozenset(k for k, a in entries.items() if a.isChecked()))

    for key, text in kinds.items():
        action = entries[key] = menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(key in hidden)
        action.triggered.connect(lambda _=False: toggled())
    return entries
