"""The docked panels and how the window feeds them: one place for the glue.

Panels know nothing of each other or of tabs; this module hands them the current
model and selection and routes their requests (jump to node, expand a body) back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.main_window import MainWindow
    from onnxstudio.ui.model_tab import ModelTab

Right = Qt.DockWidgetArea.RightDockWidgetArea
Left = Qt.DockWidgetArea.LeftDockWidgetArea
Bottom = Qt.DockWidgetArea.BottomDockWidgetArea

PanelEntry = tuple[str, QWidget, Qt.DockWidgetArea]


def create_panels(window: MainWindow) -> dict[str, PanelEntry]:
    panels: dict[str, PanelEntry] = {}
    try:
        from onnxstudio.ui.run_panel import RunPanel

        run = RunPanel()
        panels["run"] = ("Run", run, Right)
    except ImportError:
        pass
    return panels


def show_model(window: MainWindow, tab: ModelTab | None, model: Model | None) -> None:
    run = window.panels.get("run")
    if run is not None and model is not None and tab is not None:
        run[1].set_model(tab.path, model)


def show_selection(window: MainWindow, tab: ModelTab, ids: list[str]) -> None:
    if tab.model is None or not ids:
        return
    node = tab.nodes.get(ids[-1])
    if node is not None:
        window.statusBar().showMessage(
            f"{node.op_type}  {node.name}  (opset v{node.schema.since_version})", 6000)
