"""The window's size, dock layout and view choices, remembered between sessions."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from onnxstudio.ui.settings import app_settings

DOCK_SHARE, DOCK_LEAST, DOCK_MOST = 0.32, 420, 640  # a first start's docks: of the width


def first_dock_width(window_width: int) -> int:
    """The docks' width on a first start: 420 px in the default 1400 px window, wider in
    a wider one (a 1920 px window's Cost table then reads BERT's node names whole)."""
    return max(DOCK_LEAST, min(DOCK_MOST, round(window_width * DOCK_SHARE)))


class _SizeDocksWhenShown(QObject):
    """Sizes the docks once the window is shown at the size it opens with (maximised,
    or as a test or a script resized it), then goes away."""

    def __init__(self, window: QMainWindow, docks: list[QDockWidget]) -> None:
        super().__init__(window)
        self._window, self._docks = window, docks
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Show:
            self._window.removeEventFilter(self)
            width = first_dock_width(self._window.width())
            self._window.resizeDocks(self._docks, [width] * len(self._docks),
                                     Qt.Orientation.Horizontal)
            self.deleteLater()
        return False


def restore_window(window: QMainWindow, docks: dict[str, QDockWidget], version: int,
                   on_request: Iterable[str] = ()) -> bool:
    """Last session's geometry and docks, when saved with the same docks (``version``,
    derived from them: ``panels.dock_state_version``); otherwise the first-start layout,
    docks ``first_dock_width`` wide once shown and the ``on_request`` docks hidden.
    Whether it was restored."""
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
        window.resizeDocks(shown, [DOCK_LEAST] * len(shown), Qt.Orientation.Horizontal)
        _SizeDocksWhenShown(window, shown)
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
