"""The shell's wiring of the diff room: the handlers of File → Diff With… and Model → Show
Optimised Graph (rows in ui/actions.py), a model dropped on a tab with Alt held."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow, QTabWidget, QWidget

from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.settings import app_settings, store
from onnxstudio.ui.tasks import TaskRunner, next_turn
from onnxstudio.ui.window_api import MODEL_FILTER

if TYPE_CHECKING:
    from onnxstudio.ui.window_api import Canvases, DiffHost


class DiffRoom:
    """While a diff tab is current, the right side's docks step aside and its two panes
    get the width (at 1280x800 the docks kept ~500 px and each pane ~260); on any other
    tab, or none, they come back as they were: the same docks, the same one raised, the
    same width."""

    def __init__(self, window: QMainWindow, tabs: QTabWidget,
                 docks: dict[str, QDockWidget]) -> None:
        self._window, self._tabs, self._docks = window, tabs, docks
        self._away: list[QDockWidget] = []  # hidden for the diff tab
        self._raised: QDockWidget | None = None
        self._width = 0
        tabs.currentChanged.connect(lambda _index: self.follow())

    def follow(self) -> None:
        """Step aside for a diff tab, come back for any other."""
        if isinstance(self._tabs.currentWidget(), DiffTab):
            if not self._away:
                self._step_aside()
        else:
            self.come_back()

    def _step_aside(self) -> None:
        right = [d for d in self._docks.values() if not d.isHidden() and not d.isFloating()
                 and self._window.dockWidgetArea(d) == Qt.DockWidgetArea.RightDockWidgetArea]
        if not right:
            return
        self._width = max(d.width() for d in right)
        self._raised = next((d for d in right if not d.visibleRegion().isEmpty()), None)
        self._away = right
        for dock in right:
            dock.hide()

    def come_back(self) -> None:
        """The docks the diff hid, back (also before the window saves its layout)."""
        away, self._away = self._away, []
        if not away:
            return
        for dock in away:
            dock.show()
        if self._raised is not None:
            self._raised.raise_()
        self._window.resizeDocks(away[:1], [self._width], Qt.Orientation.Horizontal)


def optimiser(window: DiffHost) -> TaskRunner:
    """The task runner that asks onnxruntime for its optimised graph (one at a time)."""
    runner = TaskRunner(window.window_widget())
    runner.finished.connect(lambda job: _optimised_ready(window, *job))
    runner.failed.connect(lambda message: _optimised_failed(window, message))
    return runner


def diff_with_dialog(window: Canvases) -> None:
    tab = window.current_tab()
    if tab is None:
        return
    settings = app_settings()
    folder = str(settings.value("last_open_dir", str(tab.path.parent)))
    path, _ = QFileDialog.getOpenFileName(
        window.window_widget(), f"Compare {tab.path.name} with…", folder, MODEL_FILTER)
    if path:
        store({"last_open_dir": str(Path(path).parent)})
        open_diff(window, tab.path, Path(path))


def open_diff(window: Canvases, a: Path, b: Path, title: str = "",
              cleanup: Callable[[], None] | None = None) -> DiffTab:
    """A new tab comparing ``a`` with ``b``; ``cleanup`` runs when it closes. The tab
    shows its progress this turn; its canvases come in the next ones (``canvasAdded``)."""
    tab = DiffTab(a, b, window.direction, window.theme, title, cleanup)
    tab.canvasAdded.connect(lambda side: _wire_canvas(window, tab, side))
    tab.loaded.connect(lambda: _panels_follow(window, tab))
    tab.activeChanged.connect(lambda: window.on_current_changed(window.tabs.currentIndex()))
    tab.failed.connect(lambda message: window.statusBar().showMessage(message, 10000))
    index = window.tabs.addTab(tab, f"⇄ {tab.title}")
    window.tabs.setTabToolTip(index, f"A: {a}\nB: {b}")
    window.tabs.setCurrentIndex(index)
    window.central.setCurrentWidget(window.tabs)
    tab.start()
    return tab


def _wire_canvas(window: Canvases, tab: DiffTab, side: ModelTab) -> None:
    side.view.show_names = window.show_names
    window.canvas_choices.apply(side, minimap=False)
    side.view.selectionChanged.connect(
        lambda ids: window.on_selection(side, ids) if side is window.current_tab() else None)
    side.loaded.connect(lambda _m: _panels_follow(window, side))
    window.connect_canvas(side)


def _panels_follow(window: Canvases, landed: QWidget) -> None:
    """A turn after a diff's result or one of its sides lands, the panels show the
    current side (when ``landed`` is, or holds, it): in the side's landing handler they
    took 16-26 ms of BERT-96's diff and optimised graph on top of its own work."""
    def follow() -> None:
        current = window.current_tab()
        if current is not None and (current is landed or landed.isAncestorOf(current)):
            window.on_current_changed(window.tabs.currentIndex())

    next_turn(landed, follow)


def show_optimised(window: DiffHost) -> None:
    """Save onnxruntime's optimised graph of the current model (in a child process, which
    a worker waits for) and open it diffed against the model."""
    tab = window.current_tab()
    if tab is None or tab.model is None or window.optimiser.busy:
        return
    from onnxstudio.runner.optimised import save_optimised_isolated

    config = window.run_panel.session_config()
    source = tab.path
    window.statusBar().showMessage(
        f"Asking onnxruntime for its optimised graph of {source.name} "
        f"({config.provider.removesuffix('ExecutionProvider')}, level {config.optimization})…")
    window.optimiser.start(lambda context: (
        source, save_optimised_isolated(source, config, context.token), config.optimization))
    window.commands["optimised"].setEnabled(False)


def _optimised_ready(window: DiffHost, source: Path, optimised: Path, level: str) -> None:
    from onnxstudio.runner.optimised import discard

    window.statusBar().clearMessage()
    open_diff(window, source, optimised, f"{source.name} as onnxruntime runs it ({level})",
              cleanup=lambda: discard(optimised))
    window.commands["optimised"].setEnabled(True)


def _optimised_failed(window: DiffHost, message: str) -> None:
    """The reason in the status line; the command is ready for another try."""
    window.statusBar().showMessage(message, 10000)
    tab = window.current_tab()
    window.commands["optimised"].setEnabled(tab is not None and tab.model is not None)
