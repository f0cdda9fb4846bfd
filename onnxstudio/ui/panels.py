"""The docked panels and how the window feeds them: one place for the glue.

Panels know nothing of each other or of tabs; this module hands them the current
model and selection, and the Inspector routes their requests (jump to a node, expand
a body) back to the current tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from onnxstudio.ui.inspector import Inspector
from onnxstudio.ui.run_panel import RunPanel

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.main_window import MainWindow
    from onnxstudio.ui.model_tab import ModelTab

PanelEntry = tuple[str, QWidget, Qt.DockWidgetArea]


def create_panels(window: MainWindow) -> dict[str, PanelEntry]:
    window.inspector = Inspector(
        window.current_tab, lambda path: window.open_paths([path]),
        lambda key: window._show_panel(key), window)
    panels: dict[str, PanelEntry] = dict(window.inspector.entries())
    run = RunPanel()
    run.status_message.connect(lambda text: window.statusBar().showMessage(text, 8000))
    panels["run"] = ("Run", run, Qt.DockWidgetArea.RightDockWidgetArea)
    return panels


def show_model(window: MainWindow, tab: ModelTab | None, model: Model | None) -> None:
    window.inspector.show_model(model)
    if model is not None and tab is not None:
        window.panels["run"][1].set_model(tab.path, model)  # type: ignore[attr-defined]


def show_selection(window: MainWindow, tab: ModelTab, ids: list[str]) -> None:
    if tab.model is not None:
        window.inspector.show_selection(tab.model, ids)
        if ids:
            window._show_panel("node")
