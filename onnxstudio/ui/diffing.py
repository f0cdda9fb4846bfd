"""The shell's wiring of the diff room: File → Diff With…, Model → Show Optimised Graph,
a model dropped on a tab with Alt held, and diff tabs treated like model tabs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from onnxstudio.ui import panels
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.tasks import TaskRunner

if TYPE_CHECKING:
    from onnxstudio.ui.main_window import MainWindow


def install(window: MainWindow) -> None:
    """Add the diff actions to the window's File and Model menus."""
    window.act_diff = QAction("&Diff With…", window)
    window.act_diff.setShortcut("Ctrl+Shift+D")
    window.act_diff.setStatusTip("Compare this model with another one, node by node")
    window.act_diff.triggered.connect(lambda: diff_with_dialog(window))
    window.act_optimised = QAction("Show &Optimised Graph", window)
    window.act_optimised.setStatusTip(
        "What onnxruntime runs: its optimised graph (Run panel's provider and level), "
        "diffed against this model")
    window.act_optimised.triggered.connect(lambda: show_optimised(window))
    file_menu = window.menuBar().actions()[0].menu()
    file_menu.insertAction(window.act_export, window.act_diff)  # type: ignore[union-attr]
    window.model_menu.addSeparator()
    window.model_menu.addAction(window.act_optimised)
    window._optimiser = TaskRunner(window)
    window._optimiser.finished.connect(lambda job: _optimised_ready(window, *job))
    window._optimiser.failed.connect(
        lambda message: window.statusBar().showMessage(message, 10000))


def update_actions(window: MainWindow, has_model: bool) -> None:
    window.act_diff.setEnabled(has_model)
    window.act_optimised.setEnabled(has_model and not window._optimiser.busy)


def diff_with_dialog(window: MainWindow) -> None:
    from onnxstudio.ui.main_window import MODEL_FILTER

    tab = window.current_tab()
    if tab is None:
        return
    settings = app_settings()
    folder = str(settings.value("last_open_dir", str(tab.path.parent)))
    path, _ = QFileDialog.getOpenFileName(
        window, f"Compare {tab.path.name} with…", folder, MODEL_FILTER)
    if path:
        settings.setValue("last_open_dir", str(Path(path).parent))
        open_diff(window, tab.path, Path(path))


def open_diff(window: MainWindow, a: Path, b: Path, title: str = "",
              cleanup=None) -> DiffTab:  # type: ignore[no-untyped-def]
    """A new tab comparing ``a`` with ``b``; ``cleanup`` runs when it closes."""
    tab = DiffTab(a, b, window.direction, window.theme, title, cleanup)  # type: ignore[arg-type]
    for side in tab.tabs():
        _wire_canvas(window, tab, side)
    tab.canvas_added.connect(lambda side: _wire_canvas(window, tab, side))
    tab.loaded.connect(lambda: window._on_current_changed(window.tabs.currentIndex()))
    tab.active_changed.connect(lambda: window._on_current_changed(window.tabs.currentIndex()))
    tab.failed.connect(lambda message: window.statusBar().showMessage(message, 10000))
    index = window.tabs.addTab(tab, f"⇄ {tab.title}")
    window.tabs.setTabToolTip(index, f"A: {a}\nB: {b}")
    window.tabs.setCurrentIndex(index)
    window.central.setCurrentWidget(window.tabs)
    tab.start()
    return tab


def _wire_canvas(window: MainWindow, tab: DiffTab, side: ModelTab) -> None:
    side.view.show_names = window.show_names
    side.view.selectionChanged.connect(
        lambda ids: window._on_selection(side, ids) if side is window.current_tab() else None)
    side.loaded.connect(
        lambda _m: window._on_current_changed(window.tabs.currentIndex())
        if side is window.current_tab() else None)
    panels.connect_tab(window, side)


def show_optimised(window: MainWindow) -> None:
    """Save onnxruntime's optimised graph of the current model (off the GUI thread) and
    open it diffed against the model."""
    tab = window.current_tab()
    if tab is None or tab.model is None or window._optimiser.busy:
        return
    from onnxstudio.runner.optimised import save_optimised

    config = window.panels["run"][1].session_config()  # type: ignore[attr-defined]
    source = tab.path
    window.statusBar().showMessage(
        f"Asking onnxruntime for its optimised graph of {source.name} "
        f"({config.provider.removesuffix('ExecutionProvider')}, level {config.optimization})…")
    window._optimiser.start(lambda _context: (source, save_optimised(source, config),
                                              config.optimization))
    update_actions(window, True)


def _optimised_ready(window: MainWindow, source: Path, optimised: Path, level: str) -> None:
    from onnxstudio.runner.optimised import discard

    window.statusBar().clearMessage()
    open_diff(window, source, optimised, f"{source.name} as onnxruntime runs it ({level})",
              cleanup=lambda: discard(optimised))
    update_actions(window, True)
