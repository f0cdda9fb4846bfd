"""Tab bars of tabbed docks show whole names and scroll, never "No… Mo… Op…".

QMainWindow makes those bars on its own, whenever docks are tabified or a state is
restored; each is caught when it is polished. The document tabs (a QTabWidget's bar) are
not touched.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow, QTabBar


class _DockTabs(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ChildPolished:
            child = event.child()  # type: ignore[attr-defined]
            if isinstance(child, QTabBar) and child.parent() is watched:
                child.setElideMode(Qt.TextElideMode.ElideNone)
                child.setUsesScrollButtons(True)
                child.setExpanding(False)
        return False


def keep_dock_tabs_readable(window: QMainWindow) -> None:
    """Install the filter on ``window`` (it is parented there, so it lives as long)."""
    window.installEventFilter(_DockTabs(window))
