"""The window's size, dock layout and view choices, remembered between sessions."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from onnxstudio.ui.settings import app_settings


def restore_window(window: QMainWindow, docks: dict[str, QDockWidget], version: int,
                   on_request: Iterable[str] = ()) -> bool:
    """Last session's geometry and docks, when saved with the same docks (``version``,
    derived from them: ``panels.dock_state_version``); otherwise the first-start layout,
    panels a third at most and the ``on_request`` docks hidden. Whether it was restored."""
    settings = app_settings()
    geometry = settings.value("window/geometry")
    if isinstance(geometry, QByteArray | bytes):
        window.restoreGeometry(QByteArray(geometry))
    else:
        window.resize(1400, 900)
    state = settings.value("window/state")
    restored = isinstance(state, QByteArray | bytes) and window.restoreState(
        QByteArray(state), version)
    if not restored and docks:
        shown = list(docks.values())
        window.resizeDocks(shown, [420] * len(shown), Qt.Orientation.Horizontal)
        for key in on_request:  # clutter until Ctrl+F / the first edit
            docks[key].hide()
    return restored


def save_window(window: QMainWindow, version: int, **choices: object) -> None:
    """Geometry, docks (saved as ``version``) and the view choices given (appearance,
    direction, ...)."""
    settings = app_settings()
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState(version))
    for key, value in choices.items():
        settings.setValue(key, value)
    settings.sync()
