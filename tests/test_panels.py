"""Panels with one shape (issue 34): a panel is a class and one registration; the saved
dock layout's version is derived from the registered docks, so a layout saved before a
panel was added is ignored, not misapplied."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from PySide6.QtWidgets import QLabel

from onnxstudio.model import Model
from onnxstudio.ui import main_window
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.main_window import MainWindow, sample_model_path
from onnxstudio.ui.panel_registry import PANELS
from onnxstudio.ui.panels import PanelHost, dock_state_version
from onnxstudio.ui.tasks import TaskRunner
from onnxstudio.ui.widgets.dock_spec import LEFT, DockSpec
from tests.conftest import shown_window


class NotesPanel:
    """A new panel, as a helper would add one: a dock and the hooks it wants."""

    def __init__(self, host: PanelHost) -> None:
        self.label = QLabel("No model")
        self.selected: list[str] = []
        self.runs: list[tuple[ModelTab | None, int]] = []

    def docks(self) -> Sequence[DockSpec]:
        return [DockSpec("notes", "Notes", self.label, LEFT)]

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        self.label.setText(f"{model.graph.name}: {len(model.graph.nodes)} nodes"
                           if model is not None else "No model")

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        self.selected = ids

    def show_run(self, tab: ModelTab | None, outcomes: Sequence[object]) -> None:
        self.runs.append((tab, len(outcomes)))

    def shutdown(self) -> None:
        pass


def _window(qtbot) -> MainWindow:
    window = shown_window(qtbot)
    qtbot.waitExposed(window)
    return window


def _close(window: MainWindow) -> None:
    window.shutdown()  # saves the layout, as closing the window does
    window.hide()
    TaskRunner.wait_all()


def test_a_new_panel_changes_the_version_and_the_old_layout_is_ignored(
        qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _window(qtbot)
    names = [d.objectName() for d in first.docks.values()]
    assert first.panels.version == dock_state_version(names)
    first.show_panel("search")  # a layout only a saved state would give
    first.docks["model"].hide()
    _close(first)

    again = _window(qtbot)  # same panels: the layout comes back
    assert again.panels.version == first.panels.version
    assert again.docks["search"].isVisible() and not again.docks["model"].isVisible()
    _close(again)

    monkeypatch.setattr(main_window, "PANELS", [*PANELS, NotesPanel])
    grown = _window(qtbot)
    assert "notes" in grown.docks
    assert grown.panels.version != first.panels.version
    # the old layout is refused whole: the first-start layout, the new dock shown
    assert not grown.docks["search"].isVisible() and grown.docks["model"].isVisible()
    assert grown.docks["notes"].isVisible()


def test_the_version_follows_the_docks_names_and_order() -> None:
    names = ["dock_node", "dock_run"]
    assert dock_state_version(names) == dock_state_version(list(names))
    assert dock_state_version(names) != dock_state_version(names[::-1])
    assert dock_state_version(names) != dock_state_version([*names, "dock_notes"])


def test_a_registered_panel_follows_the_current_model_selection_and_run(
        qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(main_window, "PANELS", [*PANELS, NotesPanel])
    window = _window(qtbot)
    notes = window.panel(NotesPanel)
    assert notes.label.text() == "No model"
    [tab] = window.open_paths([str(sample_model_path())])
    qtbot.waitUntil(lambda: tab.model is not None and tab.layout_data is not None,
                    timeout=60000)
    qtbot.waitUntil(lambda: notes.label.text() != "No model", timeout=10000)
    assert notes.label.text().endswith(f"{len(tab.model.graph.nodes)} nodes")
    node = tab.model.graph.nodes[0].id
    tab.view.set_selection([node])
    assert notes.selected == [node]
    run = window.run_panel
    assert run.run_random()
    qtbot.waitUntil(lambda: bool(notes.runs), timeout=60000)
    assert notes.runs == [(tab, 1)]
    window.close_tab(0)
    assert notes.label.text() == "No model"
    _close(window)
