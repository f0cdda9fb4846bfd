"""One dock a panel asks the window for: key, title, body, side and how it starts.

Here, below every room, so a panel in any room can describe its docks itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
LEFT = Qt.DockWidgetArea.LeftDockWidgetArea

# "tabbed": shown, in one tab group with the other tabbed docks of its side;
# "first_use": hidden until first shown, then tabbed beside the dock named ``beside``;
# "on_request": hidden on a first start (no saved layout) until asked for (Ctrl+F, an edit).
Start = Literal["tabbed", "first_use", "on_request"]


@dataclass(frozen=True)
class DockSpec:
    key: str  # the window's name for it: show_panel(key), the dock's object name
    title: str
    widget: QWidget
    area: Qt.DockWidgetArea = RIGHT
    start: Start = "tabbed"
    beside: str = ""  # "first_use": the dock it joins as a tab

    @property
    def object_name(self) -> str:
        """What QMainWindow.saveState records the dock by."""
        return f"dock_{self.key}"
