"""The main window: tabs of open models, docked panels, menus, drops, remembered state."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, QUrl
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QIcon,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QStackedWidget,
    QTabWidget,
    QToolBar,
    QWidget,
)

from onnxstudio.export.formats import ExportResult
from onnxstudio.layout.types import Layout
from onnxstudio.model import Model
from onnxstudio.model.schemas import display_domain
from onnxstudio.model.summary import model_summary
from onnxstudio.render.overlay import OverlayData
from onnxstudio.resources import resource
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.ui import appearance, diffing, editing, panels
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.diff.diff_tab import DiffTab
from onnxstudio.ui.settings import add_recent_file, app_settings, recent_files
from onnxstudio.ui.welcome import WelcomePage
from onnxstudio.ui.widgets.status import ElidedLabel, StatusBar

if TYPE_CHECKING:
    from onnxstudio.ui.dialogs.split_dialog import SplitDialog

MODEL_SUFFIXES = {".onnx", ".onnxtxt", ".onnxtext", ".ort"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".npy"}
DOCK_STATE_VERSION = 4  # bump when the set of docks changes: old layouts are then ignored
RUN_DOCKS = ("profile", "tensor", "compare")  # run inspection, beside the Run panel
MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.onnxtext);;All files (*)"


def sample_model_path() -> Path:
    return resource("sample", "digits_cnn.onnx")


class MainWindow(QMainWindow):
    """Hosts one ModelTab per open file and the panels that describe the current one."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("onnxstudio")
        self.setWindowIcon(QIcon(str(resource("icons", "onnxstudio.svg"))))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks
                            | QMainWindow.DockOption.AllowTabbedDocks)
        settings = app_settings()
        self.appearance = str(settings.value("appearance", "system"))
        self.theme = appearance.resolve(self.appearance)
        self.direction = "LR" if settings.value("direction", "TB") == "LR" else "TB"
        self.show_names = settings.value("show_names", False) in (True, "true")

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_current_changed)
        self.welcome = WelcomePage()
        self.welcome.open_clicked.connect(self.open_dialog)
        self.welcome.sample_clicked.connect(self.open_sample)
        self.welcome.recent_clicked.connect(lambda p: self.open_paths([p]))
        self.central = QStackedWidget()
        self.central.addWidget(self.welcome)
        self.central.addWidget(self.tabs)
        self.setCentralWidget(self.central)

        self.docks: dict[str, QDockWidget] = {}
        self._build_panels()
        self._build_actions()
        self._build_menus()
        diffing.install(self)
        self._build_toolbar()
        self._build_status_bar()
        self._refresh_recent()
        self._restore_window_state()
        self._update_actions()

    # -- construction ---------------------------------------------------------------
    def _add_dock(self, key: str, title: str, widget: QWidget,
                  area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{key}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def _build_panels(self) -> None:
        """Docked panels: the inspector's five and the run panel (see ui/panels.py)."""
        self.panels = panels.create_panels(self)
        self.edits = editing.create_room(self)
        self.panels["history"] = editing.history_panel(self.edits)
        panels.keep_dock_tabs_readable(self)
        for key, (title, widget, area) in self.panels.items():
            self._add_dock(key, title, widget, area)
        right = [self.docks[k] for k in ("node", "model", "opsets", "weights", "run")
                 if k in self.docks]
        for first, other in itertools.pairwise(right):
            self.tabifyDockWidget(first, other)
        if right:
            right[0].raise_()
        for key in RUN_DOCKS:  # shown when first used; a saved state may show them again
            if key in self.docks:
                self.docks[key].hide()

    def _action(self, text: str, slot, shortcut: QKeySequence | str | None = None,  # type: ignore[no-untyped-def]
                checkable: bool = False, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setCheckable(checkable)
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(f"{tip} ({action.shortcut().toString()})"
                              if shortcut else tip)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey
        a = self._action
        self.act_open = a("&Open…", self.open_dialog, S.Open, tip="Open an ONNX model")
        self.act_sample = a("Open &Sample Model", self.open_sample,
                            tip="Open the bundled digit classifier")
        self.act_export = a("&Export Diagram…", self.export_diagram, "Ctrl+E",
                            tip="Export the graph as SVG, PNG, PDF, DOT or JSON")
        self.act_close = a("&Close", lambda: self.close_tab(self.tabs.currentIndex()),
                           S.Close, tip="Close this model")
        self.act_quit = a("&Quit", self.close, S.Quit)
        self.act_zoom_in = a("Zoom &In", lambda: self._view_call("zoom_in"), S.ZoomIn,
                             tip="Zoom in")
        self.act_zoom_out = a("Zoom &Out", lambda: self._view_call("zoom_out"), S.ZoomOut,
                              tip="Zoom out")
        self.act_fit = a("&Fit to Window", lambda: self._view_call("fit"), "Ctrl+0",
                         tip="Show the whole graph")
        self.act_expand = a("&Expand All Groups", lambda: self._tab_call("expand_all"),
                            "Ctrl+Shift+E", tip="Expand every group and body")
        self.act_collapse = a("&Collapse All Groups", lambda: self._tab_call("collapse_all"),
                              "Ctrl+Shift+C", tip="Collapse every group")
        self.act_names = a("Show Node &Names", self._toggle_names, "Ctrl+Shift+N",
                           checkable=True)
        self.act_names.setChecked(self.show_names)
        self.direction_group = QActionGroup(self)
        self.act_tb = a("&Top to Bottom", lambda: self.set_direction("TB"), checkable=True)
        self.act_lr = a("&Left to Right", lambda: self.set_direction("LR"), checkable=True)
        for act in (self.act_tb, self.act_lr):
            self.direction_group.addAction(act)
        (self.act_lr if self.direction == "LR" else self.act_tb).setChecked(True)
        self.act_toggle_dir = a("Toggle &Direction", self._toggle_direction, "Ctrl+D",
                                tip="Switch between top-to-bottom and left-to-right")
        self.theme_group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for name in appearance.APPEARANCES:
            act = a(name.capitalize(), lambda _=False, n=name: self.set_appearance(n),
                    checkable=True)
            self.theme_group.addAction(act)
            self.theme_actions[name] = act
        self.theme_actions[self.appearance].setChecked(True)
        self.act_find = a("&Find…", lambda: self._show_panel("search", focus=True), S.Find,
                          tip="Find nodes, tensors and weights")
        self.act_properties = a("Model &Properties", lambda: self._show_panel("model"),
                                "Ctrl+I")
        self.act_opsets = a("&Opsets", lambda: self._show_panel("opsets"))
        self.act_convert = a("&Convert to Opset…", self._convert_opset,
                             tip="Save a copy of the model converted to another opset")
        self.act_run_image = a("Run &Image…", lambda: self._run_call("open_image_dialog"),
                               "Ctrl+R", tip="Run the model on an image")
        self.act_run_random = a("Run with &Random Inputs",
                                lambda: self._run_call("run_random"), "Ctrl+Shift+R")
        self.act_benchmark = a("&Benchmark", lambda: self._run_call("benchmark"))
        self.act_profile = a("&Profile Run", lambda: self.insight.start_profile(),
                             "Ctrl+Shift+P",
                             tip="Time every node of the last input and show a heatmap")
        self.act_tensors = a("Show &Tensor Values", lambda: self._show_panel("tensor"),
                             "Ctrl+T",
                             tip="After a run, click a node or edge to see its tensor")
        self.act_capture_all = a("Capture &All Tensors", lambda: self.insight.capture_all(),
                                 tip="Keep every intermediate tensor of the last run")
        self.act_compare = a("&Compare Runs", lambda: self.insight.start_compare(),
                             "Ctrl+Shift+M",
                             tip="Run the last input on two configurations and find "
                                 "where they differ")
        self.act_clear_overlay = a("C&lear Heatmap", lambda: self.insight.clear_overlay(),
                                   tip="Plain category colours on the canvas again")
        self.act_extract = a("E&xtract Selection…", self.extract_selection, "Ctrl+Shift+X",
                             tip="Save the selected nodes as a new model")
        self.act_between = a("Select &Between", self.select_between, "Ctrl+Shift+B",
                             tip="With two nodes selected: select every node on the paths "
                                 "from one to the other")
        self.act_split = a("S&plit into Stages…", self.split_into_stages,
                           tip="Cut the model into N pipeline stages: preview, then write")
        self.act_shortcuts = a("&Keyboard Shortcuts", self.show_shortcuts, "F1")
        self.act_about = a("&About onnxstudio", self.show_about)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.act_open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.act_sample)
        file_menu.addSeparator()
        file_menu.addAction(self.act_export)
        file_menu.addSeparator()
        file_menu.addAction(self.act_close)
        file_menu.addAction(self.act_quit)
        self.edit_menu = editing.add_menus(self, bar, file_menu)

        view = bar.addMenu("&View")
        for act in (self.act_zoom_in, self.act_zoom_out, self.act_fit):
            view.addAction(act)
        view.addSeparator()
        view.addAction(self.act_expand)
        view.addAction(self.act_collapse)
        view.addAction(self.act_names)
        direction = view.addMenu("&Direction")
        direction.addAction(self.act_tb)
        direction.addAction(self.act_lr)
        view.addAction(self.act_toggle_dir)
        theme = view.addMenu("&Theme")
        for act in self.theme_actions.values():
            theme.addAction(act)
        view.addSeparator()
        panels_menu = view.addMenu("&Panels")
        for dock in self.docks.values():
            panels_menu.addAction(dock.toggleViewAction())

        model = bar.addMenu("&Model")
        model.addAction(self.act_properties)
        model.addAction(self.act_opsets)
        model.addAction(self.act_convert)
        model.addAction(self.act_find)
        model.addAction(self.act_between)
        model.addAction(self.act_extract)
        model.addAction(self.act_split)
        self.model_menu = model

        run = bar.addMenu("&Run")
        run.addAction(self.act_run_image)
        run.addAction(self.act_run_random)
        run.addAction(self.act_benchmark)
        run.addSeparator()
        for act in (self.act_profile, self.act_tensors, self.act_capture_all,
                    self.act_compare, self.act_clear_overlay):
            run.addAction(act)
        run.addSeparator()
        self._build_provider_menu(run.addMenu("Execution &Provider"))
        self.run_menu = run

        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_shortcuts)
        help_menu.addAction(self.act_about)

    def _build_toolbar(self) -> None:
        tb = QToolBar("Main")
        tb.setObjectName("toolbar_main")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for act in (self.act_open, self.act_export):
            tb.addAction(act)
        tb.addSeparator()
        for act in (self.act_fit, self.act_zoom_in, self.act_zoom_out):
            tb.addAction(act)
        tb.addSeparator()
        tb.addAction(self.act_expand)
        tb.addAction(self.act_collapse)
        tb.addAction(self.act_toggle_dir)
        tb.addSeparator()
        tb.addAction(self.act_find)
        tb.addAction(self.act_run_image)
        self.act_expand.setIconText("Expand all")
        self.act_collapse.setIconText("Collapse all")
        self.act_toggle_dir.setIconText("TB ⇄ LR")
        self.act_fit.setIconText("Fit")
        self.act_zoom_in.setIconText("Zoom +")
        self.act_zoom_out.setIconText("Zoom −")
        self.act_open.setIconText("Open")
        self.act_export.setIconText("Export")
        self.act_find.setIconText("Find")
        self.act_run_image.setIconText("Run image")
        self.addToolBar(tb)
        self.toolbar = tb

    def _build_status_bar(self) -> None:
        status = self.status_bar = StatusBar(self)  # messages never run under the counts
        self.setStatusBar(status)
        self.status_nodes = QLabel()
        self.status_opset = ElidedLabel()  # a model importing many domains stays one line
        self.status_opset.setMaximumWidth(360)  # and leaves the message its room
        self.status_progress = QProgressBar()
        self.status_progress.setMaximumWidth(180)
        self.status_progress.setRange(0, 100)
        self.status_progress.hide()
        for w in (self.status_progress, self.status_nodes, self.status_opset):
            status.addPermanentWidget(w)

    # -- settings -------------------------------------------------------------------
    def _restore_window_state(self) -> None:
        settings = app_settings()
        geometry = settings.value("window/geometry")
        if isinstance(geometry, QByteArray | bytes):
            self.restoreGeometry(QByteArray(geometry))
        else:
            self.resize(1400, 900)
        state = settings.value("window/state")
        restored = isinstance(state, QByteArray | bytes) and self.restoreState(
            QByteArray(state), DOCK_STATE_VERSION)
        if not restored and self.docks:
            # First start: panels take a third of the window at most; the graph the rest.
            docks = list(self.docks.values())
            self.resizeDocks(docks, [420] * len(docks), Qt.Orientation.Horizontal)
            for key in ("search", "history"):  # clutter until Ctrl+F / the first edit
                if key in self.docks:
                    self.docks[key].hide()

    def save_window_state(self) -> None:
        settings = app_settings()
        settings.setValue("window/geometry", self.saveGeometry())
        settings.setValue("window/state", self.saveState(DOCK_STATE_VERSION))
        settings.setValue("appearance", self.appearance)
        settings.setValue("direction", self.direction)
        settings.setValue("show_names", self.show_names)
        settings.sync()

    def shutdown(self) -> None:
        """Remember the window and stop every background thread; safe to call twice."""
        if getattr(self, "_shut_down", False):
            return
        self._shut_down = True
        self.save_window_state()
        for tab in self.model_tabs():
            tab.shutdown()
        for _title, widget, _area in self.panels.values():
            if hasattr(widget, "shutdown"):
                widget.shutdown()
        self.insight.shutdown()

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
            tab = ModelTab(path, self.direction, self.theme)
            tab.view.show_names = self.show_names
            tab.loaded.connect(lambda _m, t=tab: self._on_tab_loaded(t))
            tab.shapes_ready.connect(lambda _m, t=tab: self._on_tab_shapes(t))
            tab.failed.connect(lambda msg, t=tab: self._on_tab_failed(t, msg))
            tab.layout_changed.connect(lambda layout, t=tab: self._on_layout_changed(t, layout))
            tab.busy_changed.connect(lambda busy, t=tab: self._on_busy(t, busy))
            tab.progress.connect(lambda stage, f, t=tab: self._on_progress(t, stage, f))
            tab.close_requested.connect(lambda t=tab: self.close_tab(self.tabs.indexOf(t)))
            tab.view.selectionChanged.connect(lambda ids, t=tab: self._on_selection(t, ids))
            panels.connect_tab(self, tab)
            editing.connect_tab(self, tab)
            index = self.tabs.addTab(tab, path.name)
            self.tabs.setTabToolTip(index, str(path))
            self.tabs.setCurrentIndex(index)
            self.central.setCurrentWidget(self.tabs)
            tab.start()
            opened.append(tab)
        self._update_actions()
        return opened

    def close_tab(self, index: int) -> None:
        if index < 0:
            return
        tab = self.tabs.widget(index)
        if isinstance(tab, ModelTab | DiffTab):
            if isinstance(tab, ModelTab):
                if not self.edits.confirm_close(tab):
                    return
                self.edits.tab_closed(tab)
            tab.shutdown()
        if isinstance(tab, DiffTab) and tab.cleanup is not None:
            tab.cleanup()  # e.g. the optimised graph's temporary folder
        self.tabs.removeTab(index)
        if tab is not None:
            tab.deleteLater()
        if self.tabs.count() == 0:
            self.central.setCurrentWidget(self.welcome)
            self._on_current_changed(-1)
        self._update_actions()

    def _on_tab_loaded(self, tab: ModelTab) -> None:
        self._refresh_recent(add_recent_file(str(tab.path)))
        if tab is self.current_tab():
            self._on_current_changed(self.tabs.currentIndex())
        self.statusBar().showMessage(
            f"Opened {tab.path.name} in {tab.timings.get('load', 0):.2f} s, laid out in "
            f"{tab.timings.get('layout', 0):.2f} s", 8000)

    def _on_tab_shapes(self, tab: ModelTab) -> None:
        if tab is self.current_tab() and tab.model is not None:
            self.inspector.refresh(tab.model, tab.view.selected_ids())

    def _on_tab_failed(self, tab: ModelTab, message: str) -> None:
        self.statusBar().showMessage(message, 10000)
        index = self.tabs.indexOf(tab)
        if index >= 0 and tab.model is None:
            self.tabs.setTabText(index, f"⚠ {tab.path.name}")

    def _on_busy(self, tab: ModelTab, busy: bool) -> None:
        if tab is self.current_tab():
            self.status_progress.setVisible(busy)

    def _on_progress(self, tab: ModelTab, stage: str, fraction: float) -> None:
        if tab is self.current_tab():
            self.status_progress.setValue(int(fraction * 100))
            self.status_progress.setFormat(f"{stage} %p%")

    def _on_layout_changed(self, tab: ModelTab, layout: Layout) -> None:
        if tab is self.current_tab():
            self._update_status(tab)
            self.inspector.follow_layout(tab.model, tab.state, layout)

    def _on_current_changed(self, _index: int) -> None:
        tab = self.current_tab()
        self._update_status(tab)
        self._update_actions()
        panels.show_model(self, tab, tab.model if tab is not None else None)
        self.edits.tab_activated(tab)
        editing.update_title(self, tab)
        if tab is not None and tab.view.selected_ids():  # the panel shows that tab's pick
            panels.show_selection(self, tab, tab.view.selected_ids())

    def _on_selection(self, tab: ModelTab, ids: list[str]) -> None:
        panels.show_selection(self, tab, ids)

    def _update_status(self, tab: ModelTab | None) -> None:
        model: Model | None = tab.model if tab is not None else None
        if model is None:
            self.status_nodes.setText("")
            self.status_opset.setText("")
            return
        total = model_summary(model)["node_count_total"]
        shown = sum(1 for b in tab.layout_data.boxes if b.kind == "node") if (
            tab is not None and tab.layout_data is not None) else 0
        self.status_nodes.setText(f"{total:,} nodes ({shown:,} shown)")
        self.status_opset.setText("  ".join(
            f"{display_domain(d)} v{v}" for d, v in sorted(model.opset_imports.items())))

    def _update_actions(self) -> None:
        has_tab = self.current_tab() is not None
        has_model = has_tab and self.current_tab().model is not None  # type: ignore[union-attr]
        for act in (self.act_close,):
            act.setEnabled(has_tab)
        for act in (self.act_export, self.act_zoom_in, self.act_zoom_out, self.act_fit,
                    self.act_expand, self.act_collapse, self.act_find, self.act_run_image,
                    self.act_run_random, self.act_benchmark, self.act_properties,
                    self.act_opsets, self.act_convert):
            act.setEnabled(bool(has_model))
        diffing.update_actions(self, bool(has_model))

    def _refresh_recent(self, files: list[str] | None = None) -> None:
        files = recent_files() if files is None else files
        self.recent_menu.clear()
        for path in files:
            act = self.recent_menu.addAction(Path(path).name)
            act.setToolTip(path)
            act.setStatusTip(path)
            act.triggered.connect(lambda _=False, p=path: self.open_paths([p]))
        self.recent_menu.setEnabled(bool(files))
        self.welcome.set_recent(files)

    # -- drag and drop --------------------------------------------------------------
    @staticmethod
    def _local_paths(urls: list[QUrl]) -> list[Path]:
        return [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        paths = self._local_paths(event.mimeData().urls())
        if any(p.suffix.lower() in MODEL_SUFFIXES | IMAGE_SUFFIXES for p in paths):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = self._local_paths(event.mimeData().urls())
        models = [str(p) for p in paths if p.suffix.lower() in MODEL_SUFFIXES]
        images = [str(p) for p in paths if p.suffix.lower() in IMAGE_SUFFIXES]
        current = self.current_tab()
        if (len(models) == 1 and current is not None and current.model is not None
                and event.modifiers() & Qt.KeyboardModifier.AltModifier):
            diffing.open_diff(self, current.path, Path(models[0]))  # Alt+drop: compare
            models = []
        if models:
            self.open_paths(models)
        if images:
            self.run_images(images)
        event.acceptProposedAction()

    def run_images(self, paths: list[str]) -> None:
        """Images dropped or pasted go to the run panel of the current model."""
        if self.current_tab() is None or self.current_tab().model is None:  # type: ignore[union-attr]
            self.statusBar().showMessage("Open a model first, then drop images to run it", 8000)
            return
        self._show_panel("run")
        self._run_call("open_images", paths)

    # -- view commands --------------------------------------------------------------
    def _tab_call(self, name: str, *args: object) -> None:
        tab = self.current_tab()
        if tab is not None:
            getattr(tab, name)(*args)

    def _view_call(self, name: str) -> None:
        tab = self.current_tab()
        if tab is not None and hasattr(tab.view, name):
            getattr(tab.view, name)()

    def _run_call(self, name: str, *args: object) -> None:
        entry = self.panels.get("run")
        if entry is not None and hasattr(entry[1], name):
            self._show_panel("run")
            getattr(entry[1], name)(*args)

    def _show_panel(self, key: str, focus: bool = False) -> None:
        dock = self.docks.get(key)
        if dock is None:
            return
        run = self.docks.get("run")
        if key in RUN_DOCKS and dock.isHidden() and run is not None and not run.isHidden() \
                and not run.isFloating() and dock not in self.tabifiedDockWidgets(run):
            # Tabbed with the Run panel on first use. Not done up front: a tab group of
            # hidden docks makes restoreState grow the window past its saved geometry.
            self.tabifyDockWidget(run, dock)
        dock.show()
        dock.raise_()
        if focus and hasattr(dock.widget(), "focus_query"):
            dock.widget().focus_query()

    def _convert_opset(self) -> None:
        self._show_panel("opsets")
        self.inspector.opsets.convert_dialog()

    def _build_provider_menu(self, menu: QMenu) -> None:
        """The run panel's provider choice, as a menu (onnxruntime's available providers)."""
        combo = self.panels["run"][1].provider_combo  # type: ignore[attr-defined]
        group = QActionGroup(menu)
        for i in range(combo.count()):
            name = combo.itemText(i)
            act = menu.addAction(name.removesuffix("ExecutionProvider") or name)
            act.setCheckable(True)
            act.setChecked(name == combo.currentText())
            act.triggered.connect(lambda _=False, n=name: combo.setCurrentText(n))
            group.addAction(act)
        combo.currentTextChanged.connect(lambda name: [
            a.setChecked(a.text() == (name.removesuffix("ExecutionProvider") or name))
            for a in group.actions()])

    def _toggle_names(self) -> None:
        self.show_names = self.act_names.isChecked()
        for tab in self.model_tabs():
            tab.view.show_names = self.show_names
            tab.view.viewport().update()

    def set_direction(self, direction: str) -> None:
        self.direction = "LR" if direction == "LR" else "TB"
        (self.act_lr if self.direction == "LR" else self.act_tb).setChecked(True)
        for tab in self.model_tabs():
            tab.set_direction(self.direction)  # type: ignore[arg-type]

    def _toggle_direction(self) -> None:
        self.set_direction("TB" if self.direction == "LR" else "LR")

    def set_appearance(self, name: str) -> None:
        self.appearance = name
        self.theme_actions[name].setChecked(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            self.theme = appearance.apply(app, name)
        for tab in self.model_tabs():
            tab.set_theme(self.theme)

    def extract_selection(self) -> None:
        from onnxstudio.ui.dialogs.extract_dialog import start_extract

        tab = self.current_tab()
        if tab is not None:
            start_extract(self, tab.model, tab.view.selected_ids(),
                          last_input=self._last_run_input)

    def select_between(self) -> None:
        """Select every node on the paths joining the two selected nodes (to cut there)."""
        from onnxstudio.model.cut import nodes_between
        from onnxstudio.ui.canvas.band_select import drawn_boxes

        tab = self.current_tab()
        if tab is None or tab.model is None or tab.layout_data is None:
            return
        graph = tab.model.graph
        ends = [n.index for n in (tab.model.node_by_id(i) for i in tab.view.selected_ids())
                if n is not None and "/" not in n.id]
        if len(ends) != 2:
            self.statusBar().showMessage("Select Between: select exactly two nodes of the "
                                         "main graph first (Ctrl-click adds one)", 8000)
            return
        between = nodes_between(graph, *ends)
        if not between:
            names = " and ".join(graph.nodes[i].label for i in ends)
            self.statusBar().showMessage(f"No path joins {names}", 8000)
            return
        ids = [graph.nodes[i].id for i in sorted(between)]
        tab.view.set_selection(drawn_boxes(tab.layout_data, graph, ids))
        self.statusBar().showMessage(f"Selected {len(between):,} nodes between "
                                     f"{graph.nodes[min(ends)].label} and "
                                     f"{graph.nodes[max(ends)].label}", 8000)

    def split_into_stages(self) -> SplitDialog | None:
        """Model → Split into Stages…: a non-modal preview, so the canvas stays in view."""
        from onnxstudio.ui.dialogs.split_dialog import SplitDialog

        tab = self.current_tab()
        if tab is None or tab.model is None:
            return None
        profile = tab.run_results.get("profile")
        times = {n.index: n.time_ms for n in profile.nodes} if profile is not None else None
        before = tab.overlay_data

        def preview(data: OverlayData | None, cut: set[str]) -> None:
            tab.set_overlay(data if data is not None else before)
            tab.view.mark_values(cut)

        dialog = SplitDialog(self, tab.model, preview, times)
        dialog.show()
        return dialog

    def _last_run_input(self) -> RunRequest | None:
        """The input the run panel last ran on the current model (None: nothing yet)."""
        try:
            return self.panels["run"][1].inspection_request()  # type: ignore[attr-defined]
        except ValueError:
            return None

    def export_diagram(self) -> None:
        tab = self.current_tab()
        if tab is None or tab.model is None or tab.layout_data is None:
            return
        from onnxstudio.ui.dialogs.export_dialog import start_export

        flow = start_export(self, tab.model, tab.layout_data, tab.view)
        if flow is not None:
            flow.finished.connect(self._exported)

    def _exported(self, result: ExportResult) -> None:
        """Say where the export went, with a way to get there."""
        folder = result.path.parent
        count = f"{len(result.files)} tiles" if len(result.files) > 1 else result.path.name
        self.status_bar.show_action_message(
            f"Exported {count} to {folder}", "Open folder",
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))), 30000)

    # -- help -----------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        rows = []
        for menu_action in self.menuBar().actions():
            menu: QMenu | None = menu_action.menu()
            if menu is None:
                continue
            for act in menu.actions():
                if not act.shortcut().isEmpty():
                    text = act.text().replace("&", "").rstrip("…")
                    key = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                    rows.append(f"<tr><td>{text}</td><td><b>{key}</b></td></tr>")
        canvas = [("Zoom", "Mouse wheel, pinch, + / −"),
                  ("Pan", "Space+drag, middle drag, drag from a node, scroll bars, arrows"),
                  ("Select / add to selection", "Click / Ctrl+click"),
                  ("Select an area", "Drag on empty canvas (Shift adds, Ctrl toggles)"),
                  ("Select a whole group", "Click its title"),
                  ("Expand or collapse a group", "Double-click"),
                  ("Next / previous search hit", "F3 / Shift+F3"),
                  ("Clear selection", "Esc")]
        rows += [f"<tr><td>{a}</td><td><b>{b}</b></td></tr>" for a, b in canvas]
        QMessageBox.information(
            self, "Keyboard shortcuts",
            "<table cellspacing='6'>" + "".join(rows) + "</table>")

    def show_about(self) -> None:
        import onnx
        import PySide6
        from PySide6.QtCore import qVersion

        from onnxstudio import __version__

        try:
            from importlib.metadata import version

            ort = version("onnxruntime")
        except Exception:
            ort = "not installed"
        QMessageBox.about(
            self, "About onnxstudio",
            f"<h3>onnxstudio {__version__}</h3>"
            "<p>See, inspect, run and export ONNX models.</p>"
            f"<p>onnx {onnx.__version__}<br>onnxruntime {ort}<br>"
            f"Qt {qVersion()} (PySide6 {PySide6.__version__})</p>"
            "<p>MIT licensed.</p>")
