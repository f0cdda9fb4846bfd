"""A panel body that shows a muted hint until there is something to show."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget


class EmptyStateStack(QStackedWidget):
    """Page 0: the centred hint (``placeholder``); page 1: ``content``. Fills ``owner``."""

    def __init__(self, owner: QWidget, hint: str, content: QWidget) -> None:
        super().__init__(owner)
        self.placeholder = QLabel(hint)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setEnabled(False)
        self.addWidget(self.placeholder)
        self.addWidget(content)
        layout = QVBoxLayout(owner)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self)
