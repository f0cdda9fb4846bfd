"""Issue 34: the canvas, its minimap and a diff's sides are painted in the theme the
window shows, from the first frame, after a switch in View → Theme, and when the
desktop's colour scheme changes while the user chose "system"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from onnxstudio.render.theme import theme_named
from onnxstudio.ui import appearance, diffing
from onnxstudio.ui.canvas.model_tab import ModelTab
from onnxstudio.ui.main_window import MainWindow
from onnxstudio.ui.settings import app_settings
from tests.builders import relu_chain, save
from tests.conftest import opened_tab, shown_window
from tests.test_diff_tab import wait_diff


@pytest.fixture(autouse=True)
def _light_afterwards(qapp: QApplication) -> Iterator[None]:
    """The palette is the application's: leave it light for the tests that follow."""
    yield
    appearance.apply(qapp, "light")


def _window_is(window: MainWindow) -> str:
    return "dark" if window.palette().color(QPalette.ColorRole.Window).lightness() < 128 \
        else "light"


def _canvas_colour(tab: ModelTab) -> QColor:
    """The colour a user sees in the canvas's top-left corner (background, no box)."""
    return tab.view.viewport().grab().toImage().pixelColor(2, 2)


def _assert_painted_in(window: MainWindow, tabs: list[ModelTab], name: str) -> None:
    assert _window_is(window) == name
    for tab in tabs:
        assert _canvas_colour(tab) == QColor(theme_named(name).canvas), tab.path.name
        minimap = tab.view.minimap.grab().toImage()
        middle = minimap.pixelColor(minimap.width() // 2, 3)  # inside its frame's top
        assert (middle.lightness() < 128) == (name == "dark"), "minimap"


def test_a_window_built_apart_from_run_app_shows_its_remembered_theme(qtbot,
                                                                      tmp_path: Path) -> None:
    """A dark appearance saved last time: the window, not only its canvas, is dark (the
    canvas read the setting while the palette stayed light)."""
    settings = app_settings()
    settings.setValue("appearance", "dark")
    settings.sync()
    window = shown_window(qtbot)
    tab = opened_tab(qtbot, window, save(relu_chain(3), tmp_path / "m.onnx"))
    _assert_painted_in(window, [tab], "dark")
    assert window.commands["theme_dark"].isChecked()


def test_switching_theme_repaints_every_canvas_and_diff_side(qtbot, tmp_path: Path) -> None:
    window = shown_window(qtbot)
    a = save(relu_chain(3), tmp_path / "a.onnx")
    b = save(relu_chain(4), tmp_path / "b.onnx")
    tab = opened_tab(qtbot, window, a)
    diff = wait_diff(qtbot, diffing.open_diff(window, a, b))
    for name in ("dark", "light", "dark"):
        window.set_appearance(name)
        qtbot.wait(20)
        _assert_painted_in(window, [tab, *diff.tabs()], name)
        assert diff.theme == name  # what its merged view will open in


def test_the_desktop_scheme_moves_a_system_window_and_not_a_chosen_one(
        qtbot, tmp_path: Path) -> None:
    window = shown_window(qtbot)
    window.set_appearance("system")
    tab = opened_tab(qtbot, window, save(relu_chain(3), tmp_path / "m.onnx"))
    hints = QGuiApplication.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.wait(20)
    _assert_painted_in(window, [tab], "dark")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    qtbot.wait(20)
    _assert_painted_in(window, [tab], "light")
    window.set_appearance("light")  # chosen: the desktop's scheme no longer matters
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.wait(20)
    _assert_painted_in(window, [tab], "light")
