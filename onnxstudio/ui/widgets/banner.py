"""A non-modal error banner (red box, selectable text, ✕ to dismiss) for dock panels.

Panels report failures here instead of in a dialog, so the user can keep working and
copy the message; it has the same look as the run panel's banner.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QWidget


class ErrorBanner(QFrame):
    """Hidden until `show_message`; the ✕ hides it again and emits `dismissed`."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setStyleSheet(
            "#errorBanner { background: #fde2e1; border: 1px solid #e0908a; "
            "border-radius: 4px; } QLabel, QToolButton { color: #6b1510; }")
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 4, 4, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        # Long paths must wrap or clip, never widen a narrow dock.
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        row.addWidget(self.label, 1)
        row.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_message(self, message: str) -> None:
        self.label.setText(message)
        self.show()

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()

    def message(self) -> str:
        """The text shown, or "" while the banner is hidden."""
        parent = self.parentWidget()
        visible = self.isVisibleTo(parent) if parent is not None else self.isVisible()
        return self.label.text() if visible else ""
