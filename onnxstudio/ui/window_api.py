"""What the shell's controllers (``opening``, ``editing``, ``diffing``, ``actions``) need
from the window, as Protocols: they are handed the window but see only these, so none
imports ``main_window`` (an import-linter contract keeps it so) and each one's needs
are written down."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QMenu,
    QStackedWidget,
    QStatusBar,
    QTabWidget,
)

from onnxstudio.layout.types import Direction

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.canvas.model_tab import ModelTab
    from onnxstudio.ui.canvas_choices import CanvasChoices
    from onnxstudio.ui.dialogs.merge_dialog import MergeDialog
    from onnxstudio.ui.dialogs.split_dialog import SplitDialog
    from onnxstudio.ui.edit.room import EditRoom
    from onnxstudio.ui.insight.cost_insight import CostInsight
    from onnxstudio.ui.insight.run_insight import RunInsight
    from onnxstudio.ui.insight.run_panel import RunPanel
    from onnxstudio.ui.inspector.inspector import Inspector
    from onnxstudio.ui.status_line import StatusLine
    from onnxstudio.ui.tasks import TaskRunner
    from onnxstudio.ui.welcome import WelcomePage

MODEL_FILTER = "ONNX models (*.onnx *.onnxtxt *.onnxtext);;All files (*)"


class Canvases(Protocol):
    """The tabs of canvases and the view choices each new canvas takes."""

    tabs: QTabWidget
    central: QStackedWidget
    direction: Direction
    theme: str
    show_names: bool
    canvas_choices: CanvasChoices

    def window_widget(self) -> QMainWindow:
        """The window itself, to parent dialogs and tasks."""

    def current_tab(self) -> ModelTab | None: ...

    def model_tabs(self) -> list[ModelTab]: ...

    def statusBar(self) -> QStatusBar: ...

    def on_current_changed(self, index: int) -> None:
        """The panels follow the current tab (also after it loads)."""

    def on_selection(self, tab: ModelTab, ids: list[str]) -> None: ...

    def connect_canvas(self, tab: ModelTab) -> None:
        """A new canvas' run gestures (edge click, overlay ✕)."""


class WithEdits(Canvases, Protocol):
    edits: EditRoom


class EditHost(WithEdits, Protocol):
    """What ``editing`` needs to show an edited model everywhere."""

    docks: dict[str, QDockWidget]

    def show_panel(self, key: str) -> None: ...

    def show_in_panels(self, tab: ModelTab | None, model: Model | None) -> None: ...

    def resizeDocks(self, docks: Sequence[QDockWidget], sizes: Sequence[int],
                    orientation: Qt.Orientation, /) -> None: ...

    def setWindowTitle(self, title: str, /) -> None: ...


class OpenHost(WithEdits, Protocol):
    """What ``opening`` needs: a tab per file, its signals routed, the recent list."""

    status_line: StatusLine
    inspector: Inspector
    recent_menu: QMenu
    welcome: WelcomePage

    def open_paths(self, paths: list[str]) -> list[ModelTab]: ...

    def close_tab(self, index: int) -> None: ...

    def update_status(self, tab: ModelTab | None) -> None: ...

    def run_images(self, paths: list[str]) -> None: ...


class DiffHost(Canvases, Protocol):
    """What Show Optimised Graph needs besides a diff tab's canvases."""

    optimiser: TaskRunner
    run_panel: RunPanel
    commands: dict[str, QAction]


class CommandHost(DiffHost, Protocol):
    """The handlers the command table (``actions``) calls."""

    insight: RunInsight
    cost: CostInsight

    def open_dialog(self) -> None: ...
    def open_sample(self) -> None: ...
    def merge_models(self) -> MergeDialog: ...
    def export_diagram(self) -> None: ...
    def close_current_tab(self) -> None: ...
    def close(self) -> bool: ...
    def on_tab(self, command: Callable[[ModelTab], object]) -> None: ...
    def collapse_all(self) -> None: ...
    def toggle_names(self) -> None: ...
    def toggle_canvas_parts(self) -> None: ...
    def set_direction(self, direction: str) -> None: ...
    def toggle_direction(self) -> None: ...
    def set_appearance(self, name: str) -> None: ...
    def show_panel(self, key: str) -> None: ...
    def convert_opset(self) -> None: ...
    def find_in_model(self) -> None: ...
    def select_between(self) -> None: ...
    def extract_selection(self) -> None: ...
    def split_into_stages(self) -> SplitDialog | None: ...
    def run_image_dialog(self) -> None: ...
    def run_random(self) -> None: ...
    def benchmark(self) -> None: ...
    def show_shortcuts(self) -> None: ...
    def show_about(self) -> None: ...
