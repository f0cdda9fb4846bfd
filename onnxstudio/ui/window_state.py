"""The window's size, dock layout and view choices, remembered between sessions."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from onnxstudio.ui.settings import app_settings

DOCK_STATE_VERSION = 5  # bump when the set of docks changes: old layouts are then ignored


def restore_window(window: QMainWindow, docks: dict[str, QDockWidget]) -> None:
    """Last session's geometry and docks; on first start, panels take a third at most."""
    settings = app_settings()
    geometry = settings.value("window/geometry")
    if isinstance(geometry, QByteArray | bytes):
        window.restoreGeometry(QByteArray(geometry))
    else:
        window.resize(1400, 900)
    state = settings.value("window/state")
    restored = isinstance(state, QByteArray | bytes) and window.restoreState(
        QByteArray(state), DOCK_STATE_VERSION)
    if not restored and docks:
        shown = list(docks.values())
        window.resizeDocks(shown, [420] * len(shown), Qt.Orientation.Horizontal)
        for key in ("search", "history"):  # clutter until Ctrl+F / the first edit
            if key in docks:
                docks[key].hide()


def save_window(window: QMainWindow, **choices: object) -> None:
    """Geometry, docks and the view choices given (appearance, direction, ...)."""
    settings = app_settings()
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState(DOCK_STATE_VERSION))
    for key, value in choices.items():
        settings.setValue(key, value)
    settings.sync()
