"""The docked panels and how the window feeds them: one place for the glue.

Panels know nothing of each other or of tabs; this module hands them the current
model and selection, and the Inspector routes their requests (jump to a node, expand
a body) back to the current tab.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QTabBar, QWidget

from onnxstudio.ui.insight.run_insight import RunInsight
from onnxstudio.ui.insight.run_panel import RunPanel
from onnxstudio.ui.inspector.inspector import Inspector

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.canvas.model_tab import ModelTab
    from onnxstudio.ui.main_window import MainWindow

PanelEntry = tuple[str, QWidget, Qt.DockWidgetArea]


def create_panels(window: MainWindow) -> dict[str, PanelEntry]:
    window.inspector = Inspector(
        window.current_tab, lambda path: window.open_paths([path]),
        lambda key: window._show_panel(key), window)
    panels: dict[str, PanelEntry] = dict(window.inspector.entries())
    run = RunPanel()
    run.status_message.connect(lambda text: window.statusBar().showMessage(text, 8000))
    panels["run"] = ("Run", run, Qt.DockWidgetArea.RightDockWidgetArea)
    insight = window.insight = RunInsight(window.current_tab, run, window)
    insight.status_message.connect(lambda text: window.statusBar().showMessage(text, 8000))
    insight.show_panel.connect(window._show_panel)
    right = Qt.DockWidgetArea.RightDockWidgetArea
    panels["profile"] = ("Profile", _scrolled(insight.profile_panel), right)
    panels["tensor"] = ("Tensor", _scrolled(insight.tensor_dock), right)
    panels["compare"] = ("Compare", _scrolled(insight.compare_panel), right)
    return panels


class _DockTabs(QObject):
    """Tab bars of tabbed docks show whole names and scroll, never "No… Mo… Op…".

    QMainWindow makes those bars on its own, whenever docks are tabified or a state
    is restored; each is caught when it is polished."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ChildPolished:
            child = event.child()  # type: ignore[attr-defined]
            if isinstance(child, QTabBar) and child.parent() is watched:
                child.setElideMode(Qt.TextElideMode.ElideNone)
                child.setUsesScrollButtons(True)
                child.setExpanding(False)
        return False


def keep_dock_tabs_readable(window: MainWindow) -> None:
    """See :class:`_DockTabs`; the document tabs (a QTabWidget's bar) are not touched."""
    window._dock_tabs = _DockTabs(window)  # type: ignore[attr-defined]
    window.installEventFilter(window._dock_tabs)  # type: ignore[attr-defined]


def _scrolled(panel: QWidget) -> QScrollArea:
    """A dock may be short: its panel scrolls rather than forcing the window (and every
    restored geometry) to the panel's full height."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(panel)
    return area


def connect_tab(window: MainWindow, tab: ModelTab) -> None:
    """The canvas' run-related gestures: click an edge to see its tensor, ✕ on the
    overlay legend to clear the heatmap."""
    tab.view.edgeClicked.connect(
        lambda value: window.insight.edge_clicked(value) if tab is window.current_tab()
        else None)
    tab.view.overlayClosed.connect(window.insight.clear_overlay)


def show_model(window: MainWindow, tab: ModelTab | None, model: Model | None) -> None:
    window.inspector.show_model(model)
    if model is not None and tab is not None:
        window.panels["run"][1].set_model(  # type: ignore[attr-defined]
            tab.path, model, model_bytes=tab.model_bytes)
    window.insight.show_model(tab, model)


def show_selection(window: MainWindow, tab: ModelTab, ids: list[str]) -> None:
    if tab.model is not None:
        window.inspector.show_selection(tab.model, ids)
        if ids:
            window._show_panel("node")
        window.insight.show_selection(tab, ids)
