"""The main window: tabs of open models, docked panels, menus, drops, remembered state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QIcon
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QTabWidget,
)

from onnxstudio.layout.types import Direction
from onnxstudio.model import Model
from onnxstudio.resources import resource
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.ui import actions, appearance, diffing, editing, opening
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.canvas_choices import CanvasChoices
from onnxstudio.ui.closing import release_closed
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.help import show_about, show_shortcuts
from onnxstudio.ui.model_commands import (
    export_diagram,
    open_merge_dialog,
    open_split_dialog,
    select_between,
)
from onnxstudio.ui.panel_registry import (
    PANELS,
    CostDocks,
    EditHistory,
    InspectorPanels,
    RunDock,
    RunInsightDocks,
)
from onnxstudio.ui.panels import P, PanelSet
from onnxstudio.ui.settings import app_settings
from onnxstudio.ui.status_line import StatusLine
from onnxstudio.ui.tasks import TaskRunner
from onnxstudio.ui.warmup import start_warmup
from onnxstudio.ui.welcome import WelcomePage
from onnxstudio.ui.widgets.dock_tabs import keep_dock_tabs_readable
from onnxstudio.ui.widgets.status import StatusBar
from onnxstudio.ui.window_api import MODEL_FILTER
from onnxstudio.ui.window_state import restore_window, save_window

if TYPE_CHECKING:
    from onnxstudio.ui.dialogs.merge_dialog import MergeDialog
    from onnxstudio.ui.dialogs.split_dialog import SplitDialog


def sample_model_path() -> Path:
    return resource("sample", "digits_cnn.onnx")


class MainWindow(QMainWindow):
    """Hosts one ModelTab per open file and the panels that describe the current one.

    The controllers (``opening``, ``editing``, ``diffing``, ``actions``) and the panels
    are handed this window but see it through the Protocols of ``window_api`` and
    ``panels.PanelHost``."""

    def __init__(self) -> None:
        super().__init__()
        start_warmup()
        self.setWindowTitle("onnxstudio")
        self.setWindowIcon(QIcon(str(resource("icons", "onnxstudio.svg"))))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        settings = app_settings()
        self.appearance = str(settings.value("appearance", "system"))
        # The window applies its appearance itself, and its canvases take the theme the
        # palette shows from then on (ThemeFollower): set apart, a window built without
        # run_app painted a dark canvas inside a light frame.
        app = QApplication.instance()
        self.theme = (appearance.apply(app, self.appearance) if isinstance(app, QApplication)
                      else appearance.resolve(self.appearance))
        self.direction: Direction = "LR" if settings.value("direction", "TB") == "LR" else "TB"
        self.show_names = settings.value("show_names", False) in (True, "true")
        self.canvas_choices = CanvasChoices()  # View: edge labels, minimap, hidden nodes

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self.on_current_changed)
        self.welcome = WelcomePage()
        self.welcome.openClicked.connect(self.open_dialog)
        self.welcome.sampleClicked.connect(self.open_sample)
        self.welcome.recentClicked.connect(lambda p: self.open_paths([p]))
        self.central = QStackedWidget()
        self.central.addWidget(self.welcome)
        self.central.addWidget(self.tabs)
        self.setCentralWidget(self.central)

        self._build_panels()
        self.command_table = actions.command_table(self)
        built = actions.build(self, self.command_table)
        self.commands, self.toolbar = built.actions, built.toolbar
        self.recent_menu = built.submenus["recent"]
        self.commands["names"].setChecked(self.show_names)
        self.commands[f"direction_{self.direction.lower()}"].setChecked(True)
        self.commands[f"theme_{self.appearance}"].setChecked(True)
        for dock in self.docks.values():
            built.submenus["panels"].addAction(dock.toggleViewAction())
        self.hide_actions = self.canvas_choices.bind(self.commands, built.submenus["hide"],
                                                     self.model_tabs)
        file_menu = self.menuBar().actions()[0].menu()
        assert isinstance(file_menu, QMenu)
        editing.add_menus(self.edits, self.menuBar(), file_menu, self.commands["close"])
        self.optimiser = diffing.optimiser(self)
        self.diff_room = diffing.DiffRoom(self, self.tabs, self.docks)
        actions.mirror_combo(built.submenus["providers"], self.run_panel.choices.provider_combo,
                             lambda name: name.removesuffix("ExecutionProvider") or name)
        self.status_bar = StatusBar(self)  # messages never run under the counts
        self.setStatusBar(self.status_bar)
        self.status_line = StatusLine(self.status_bar)
        opening.refresh_recent(self)
        restore_window(self, self.panels.docks, self.panels.version,
                       self.panels.keys("on_request"))
        self._update_actions()
        appearance.ThemeFollower(self, lambda: self.appearance, self._follow_theme)

    # -- construction ---------------------------------------------------------------
    def _build_panels(self) -> None:
        """Every registered panel (``panel_registry.PANELS``) and its docks; the window
        hands them the current model and selection and routes their requests."""
        keep_dock_tabs_readable(self)
        # Down the dock's edge the right side's eight tabs are all whole at 1280x800;
        # along its foot four fitted and the bar scrolled the first to "odel".
        self.setTabPosition(Qt.DockWidgetArea.RightDockWidgetArea,
                            QTabWidget.TabPosition.East)
        self.panels = PanelSet(self)
        self.panels.build(self, PANELS)
        self.docks: dict[str, QDockWidget] = self.panels.docks
        self.inspector = self.panel(InspectorPanels).inspector
        self.run_panel = self.panel(RunDock).panel
        self.insight = self.panel(RunInsightDocks).insight
        self.cost = self.panel(CostDocks).cost
        self.edits = self.panel(EditHistory).room
        editing.connect_room(self, self.edits)
        self.run_panel.runFinished.connect(
            lambda outcomes: self.panels.show_run(self.current_tab(), outcomes))

    # -- what panels and controllers ask of the window (panels.PanelHost, window_api) ---
    def window_widget(self) -> QMainWindow:
        return self

    def panel(self, kind: type[P]) -> P:
        return self.panels.find(kind)

    def tab_count(self) -> int:
        return self.tabs.count()

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    # -- settings -------------------------------------------------------------------
    def save_window_state(self) -> None:
        save_window(self, self.panels.version, appearance=self.appearance,
                    direction=self.direction, show_names=self.show_names)

    def shutdown(self) -> None:
        """Remember the window and stop every background thread; safe to call twice."""
        if getattr(self, "_shut_down", False):
            return
        self._shut_down = True
        self.diff_room.come_back()  # the layout saved is the one without a diff tab
        self.save_window_state()
        for tab in self.model_tabs():
            tab.shutdown()
        self.panels.shutdown()
        TaskRunner.stop_all(self)  # no worker outlives the window

    def closeEvent(self, event: QCloseEvent) -> None:
        if not editing.confirm_close_all(self):
            event.ignore()
            return
        self.shutdown()
        super().closeEvent(event)

    # -- opening --------------------------------------------------------------------
    def model_tabs(self) -> list[ModelTab]:
        """Every canvas: model tabs, and each side of the diff tabs."""
        found: list[ModelTab] = []
        for i in range(self.tabs.count()):
            tab = self.tabs.widget(i)
            if isinstance(tab, ModelTab):
                found.append(tab)
            elif isinstance(tab, DiffTab):
                found.extend(tab.tabs())
        return found

    def current_tab(self) -> ModelTab | None:
        """The canvas the user works on (in a diff tab: the side last clicked)."""
        tab = self.tabs.currentWidget()
        if isinstance(tab, DiffTab):
            return tab.active_tab()
        return tab if isinstance(tab, ModelTab) else None

    def open_dialog(self) -> None:
        settings = app_settings()
        folder = str(settings.value("last_open_dir", str(Path.home())))
        paths, _ = QFileDialog.getOpenFileNames(self, "Open ONNX model", folder, MODEL_FILTER)
        if paths:
            settings.setValue("last_open_dir", str(Path(paths[0]).parent))
            self.open_paths(paths)

    def open_sample(self) -> None:
        self.open_paths([str(sample_model_path())])

    def open_paths(self, paths: list[str]) -> list[ModelTab]:
        """Open each file in a tab (or switch to it if it is open already)."""
        opened = []
        for raw in paths:
            path = Path(raw).expanduser().absolute()
            existing = next((t for i in range(self.tabs.count())
                             if isinstance(t := self.tabs.widget(i), ModelTab)
                             and t.path == path), None)
            if existing is not None and existing.error is None:
                self.tabs.setCurrentWidget(existing)
                opened.append(existing)
                continue
            tab = opening.add_model_tab(self, path)
            opened.append(tab)
        self._update_actions()
        return opened

    def connect_canvas(self, tab: ModelTab) -> None:
        """The canvas' run gestures: click an edge to see its tensor, ✕ on the legend."""
        tab.view.edgeClicked.connect(
            lambda value: self.insight.edge_clicked(value) if tab is self.current_tab()
            else None)
        tab.view.overlayClosed.connect(self.insight.clear_overlay)
        tab.view.overlayClosed.connect(self.cost.overlay_cleared)  # after: sees it cleared

    def close_tab(self, index: int) -> None:
        if index < 0:
            return
        tab = self.tabs.widget(index)
        closed: list[Model | None] = []  # freed on a worker (ui/closing.py)
        if isinstance(tab, ModelTab | DiffTab):
            if isinstance(tab, ModelTab):
                if not self.edits.confirm_close(tab):
                    return
                self.edits.tab_closed(tab)
            tab.shutdown()
            for shown in [tab] if isinstance(tab, ModelTab) else tab.tabs():
                closed.append(shown.model)
                shown.release()
        if isinstance(tab, DiffTab) and tab.cleanup is not None:
            tab.cleanup()  # e.g. the optimised graph's temporary folder
        self.tabs.removeTab(index)
        if tab is not None:
            tab.deleteLater()
            release_closed(self, closed)
        if isinstance(tab, ModelTab | DiffTab):
            still_open = {t.path for t in self.model_tabs()}
            for gone in {t.path for t in ([tab] if isinstance(tab, ModelTab) else tab.tabs())}:
                if gone not in still_open:
                    self.run_panel.model_closed(gone)
        if self.tabs.count() == 0:  # nothing of the last model stays on screen
            self.central.setCurrentWidget(self.welcome)
            self.on_current_changed(-1)
            self.statusBar().clearMessage()
        self._update_actions()

    def on_current_changed(self, _index: int) -> None:
        tab = self.current_tab()
        self.update_status(tab)
        self._update_actions()
        self.show_in_panels(tab, tab.model if tab is not None else None)
        self.edits.tab_activated(tab)
        editing.update_title(self, tab)
        if tab is not None and tab.view.selected_ids():  # the panel shows that tab's pick
            self.on_selection(tab, tab.view.selected_ids())

    def show_in_panels(self, tab: ModelTab | None, model: Model | None) -> None:
        """Every panel shows ``model`` (the tab's)."""
        self.panels.show_model(tab, model)

    def on_selection(self, tab: ModelTab, ids: list[str]) -> None:
        if tab.model is not None:
            self.panels.show_selection(tab, ids)

    def update_status(self, tab: ModelTab | None) -> None:
        if tab is None:
            self.status_line.show_model(None, None)
        else:
            self.status_line.show_model(tab.model, tab.shown_kinds(), tab.hidden_count())

    def _update_actions(self) -> None:
        tab = self.current_tab()
        has_model = tab is not None and tab.model is not None
        actions.update_enabled(self.command_table, self.commands, tab is not None, has_model)
        self.commands["optimised"].setEnabled(has_model and not self.optimiser.busy)

    # -- drag and drop --------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if opening.wanted(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        alt = event.modifiers() & Qt.KeyboardModifier.AltModifier
        opening.drop(self, event.mimeData().urls(), compare=bool(alt))
        event.acceptProposedAction()

    def run_images(self, paths: list[str]) -> None:
        """Images dropped or pasted go to the run panel of the current model."""
        if self.current_tab() is None or self.current_tab().model is None:  # type: ignore[union-attr]
            self.statusBar().showMessage("Open a model first, then drop images to run it", 8000)
            return
        self.show_panel("run")
        self.run_panel.open_images(paths)

    # -- view commands --------------------------------------------------------------
    def on_tab(self, command: Callable[[ModelTab], object]) -> None:
        tab = self.current_tab()
        if tab is not None:
            command(tab)

    def collapse_all(self) -> None:
        self.on_tab(ModelTab.collapse_all)

    def close_current_tab(self) -> None:
        self.close_tab(self.tabs.currentIndex())

    def find_in_model(self) -> None:
        self.show_panel("search")
        self.inspector.search.focus_query()

    def run_image_dialog(self) -> None:
        self.show_panel("run")
        self.run_panel.open_image_dialog()

    def run_random(self) -> None:
        self.show_panel("run")
        self.run_panel.run_random()

    def benchmark(self) -> None:
        self.show_panel("run")
        self.run_panel.benchmark()

    def show_panel(self, key: str) -> None:
        self.panels.show(key)

    def convert_opset(self) -> None:
        self.show_panel("opsets")
        self.inspector.opsets.convert_dialog()

    def toggle_names(self) -> None:
        self.show_names = self.commands["names"].isChecked()
        for tab in self.model_tabs():
            tab.view.show_names = self.show_names
            tab.view.viewport().update()

    def toggle_canvas_parts(self) -> None:
        """View → Show Edge Labels / Show Minimap, on every canvas, remembered."""
        self.canvas_choices.set_parts(self.commands, self.tabs)

    def set_direction(self, direction: str) -> None:
        self.direction = "LR" if direction == "LR" else "TB"
        self.commands[f"direction_{self.direction.lower()}"].setChecked(True)
        for tab in self.model_tabs():
            tab.set_direction(self.direction)

    def toggle_direction(self) -> None:
        self.set_direction("TB" if self.direction == "LR" else "LR")

    def set_appearance(self, name: str) -> None:
        self.appearance = name
        self.commands[f"theme_{name}"].setChecked(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            appearance.apply(app, name)  # its palette change reaches _follow_theme
        self._follow_theme(appearance.shown(self.palette()))

    def _follow_theme(self, theme: str) -> None:
        """Paint every canvas (model tabs, diff sides and merged views) in ``theme``,
        the one the window's palette shows."""
        if theme == self.theme:
            return
        self.theme = theme
        for i in range(self.tabs.count()):
            tab = self.tabs.widget(i)
            if isinstance(tab, ModelTab | DiffTab):
                tab.set_theme(theme)

    def extract_selection(self) -> None:
        from onnxstudio.ui.dialogs.extract_dialog import start_extract

        tab = self.current_tab()
        if tab is not None:
            start_extract(self, tab.model, tab.view.selected_ids(),
                          last_input=self._last_run_input)

    def select_between(self) -> None:
        """Select every node on the paths joining the two selected nodes (to cut there)."""
        tab = self.current_tab()
        if tab is not None and tab.model is not None and tab.layout_data is not None:
            self.statusBar().showMessage(select_between(tab), 8000)

    def split_into_stages(self) -> SplitDialog | None:
        """Model → Split into Stages…: a non-modal preview, so the canvas stays in view."""
        tab = self.current_tab()
        return open_split_dialog(self, tab) if tab is not None else None

    def merge_models(self) -> MergeDialog:
        """File → Merge Models…: the merged model opens in a tab of its own."""
        return open_merge_dialog(self, lambda path: self.open_paths([path]))

    def _last_run_input(self) -> RunRequest | None:
        """The input the run panel last ran on the current model (None: nothing yet)."""
        try:
            return self.run_panel.inspection_request()
        except ValueError:
            return None

    def export_diagram(self) -> None:
        tab = self.current_tab()
        if tab is not None:
            export_diagram(self, tab, self.status_bar)

    # -- help -----------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        show_shortcuts(self, actions.shortcut_rows(self.command_table, self.commands,
                                                   self.edits.shortcut_actions()))

    def show_about(self) -> None:
        show_about(self)
