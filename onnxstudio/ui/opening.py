"""Shell glue for opened models: a tab per file, its signals routed to the window (status
line, inspector, tab title, run panel through the current-tab change), and the recent
files menu and welcome list."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl

from onnxstudio.layout.types import Layout
from onnxstudio.model.formatting import model_title
from onnxstudio.runner.testdata import holds_test_data
from onnxstudio.ui import diffing, editing
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.settings import add_recent_file, recent_files
from onnxstudio.ui.tasks import next_turn

if TYPE_CHECKING:
    from onnxstudio.ui.window_api import OpenHost

MODEL_SUFFIXES = {".onnx", ".onnxtxt", ".onnxtext", ".ort"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".npy"}
RUN_SUFFIXES = IMAGE_SUFFIXES | {".wav"}


def add_model_tab(window: OpenHost, path: Path) -> ModelTab:
    """A new current tab for ``path``, loading in the background. A tab that is not the
    current one only updates its own title; the panels follow the current tab."""
    tab = ModelTab(path, window.direction, window.theme)
    tab.view.show_names = window.show_names
    window.canvas_choices.apply(tab)
    tab.loaded.connect(lambda _m: _loaded(window, tab))
    tab.shapesReady.connect(lambda _m: _shapes_ready(window, tab))
    tab.failed.connect(lambda message: _failed(window, tab, message))
    tab.layoutChanged.connect(lambda layout: _layout_changed(window, tab, layout))
    tab.busyChanged.connect(
        lambda busy: window.status_line.set_busy(busy) if tab is window.current_tab() else None)
    tab.progress.connect(
        lambda stage, f: window.status_line.set_progress(stage, f)
        if tab is window.current_tab() else None)
    tab.closeRequested.connect(lambda: window.close_tab(window.tabs.indexOf(tab)))
    tab.view.selectionChanged.connect(lambda ids: window.on_selection(tab, ids))
    window.connect_canvas(tab)
    editing.connect_tab(window, tab)
    index = window.tabs.addTab(tab, model_title(path))
    window.tabs.setTabToolTip(index, str(path))
    window.tabs.setCurrentIndex(index)
    window.central.setCurrentWidget(window.tabs)
    tab.start()
    return tab


def _loaded(window: OpenHost, tab: ModelTab) -> None:
    # The recent-files list in a turn of its own: with the panels filling in this one,
    # the window froze ~50 ms when dag100k's panels landed.
    files = add_recent_file(str(tab.path))
    next_turn(window.window_widget(), lambda: refresh_recent(window, files))
    if tab is window.current_tab():
        window.on_current_changed(window.tabs.currentIndex())
    window.statusBar().showMessage(
        f"Opened {tab.path.name} in {tab.timings.get('load', 0):.2f} s, laid out in "
        f"{tab.timings.get('layout', 0):.2f} s", 8000)


def _shapes_ready(window: OpenHost, tab: ModelTab) -> None:
    if tab is window.current_tab() and tab.model is not None:
        window.inspector.refresh(tab.model, tab.view.selected_ids())


def _failed(window: OpenHost, tab: ModelTab, message: str) -> None:
    window.statusBar().showMessage(message, 10000)
    index = window.tabs.indexOf(tab)
    if index >= 0 and tab.model is None:
        window.tabs.setTabText(index, f"⚠ {model_title(tab.path)}")


def _layout_changed(window: OpenHost, tab: ModelTab, layout: Layout) -> None:
    if tab is window.current_tab():
        window.update_status(tab)
        window.inspector.follow_layout(tab.model, tab.state, layout)


def refresh_recent(window: OpenHost, files: list[str] | None = None) -> None:
    """File → Open Recent and the welcome page's list, newest first."""
    files = recent_files() if files is None else files
    window.recent_menu.clear()
    for path in files:
        act = window.recent_menu.addAction(Path(path).name)
        act.setToolTip(path)
        act.setStatusTip(path)
        act.triggered.connect(lambda _=False, p=path: window.open_paths([p]))
    window.recent_menu.setEnabled(bool(files))
    window.welcome.set_recent(files)


def _local_paths(urls: list[QUrl]) -> list[Path]:
    return [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]


def _runnable(path: Path) -> bool:
    """What the Run panel takes: images, .npy, a .wav clip, a folder of images, test data."""
    return path.suffix.lower() in RUN_SUFFIXES or path.is_dir() or holds_test_data(path)


def wanted(urls: list[QUrl]) -> bool:
    """Whether a drag carries a model or something to run."""
    return any(p.suffix.lower() in MODEL_SUFFIXES or _runnable(p) for p in _local_paths(urls))


def drop(window: OpenHost, urls: list[QUrl], compare: bool) -> None:
    """Models open in tabs (with ``compare``, one model is diffed against the current
    tab's); images, clips, folders and test data (a test_data_set_N folder, .pb,
    .npz) run on the current model, or, dropped with a
    model, on that model once it has loaded."""
    paths = _local_paths(urls)
    models = [str(p) for p in paths if p.suffix.lower() in MODEL_SUFFIXES]
    inputs = [str(p) for p in paths if p.suffix.lower() not in MODEL_SUFFIXES and _runnable(p)]
    current = window.current_tab()
    if len(models) == 1 and current is not None and current.model is not None and compare:
        diffing.open_diff(window, current.path, Path(models[0]))  # Alt+drop: compare
        models = []
    if models:
        opened = window.open_paths(models)[-1]
        if inputs and opened.model is None:  # the image was for this model: run it there
            def run_once(_model: object) -> None:
                opened.loaded.disconnect(run_once)
                if opened is window.current_tab():
                    window.run_images(inputs)

            opened.loaded.connect(run_once)
            return
    if inputs:
        window.run_images(inputs)
