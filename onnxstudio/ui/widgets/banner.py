"""A non-modal error banner (red box, selectable text, ✕ to dismiss) for dock panels.

Panels report failures here instead of in a dialog, so the user can keep working and
copy the message; it has the same look as the run panel's banner. A message made from a
longer text (onnxruntime's C++ signatures, onnx's assertions) shows one line and a
Details button that unfolds the whole text (`errors.details_for`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from onnxstudio.errors import details_for


class ErrorBanner(QFrame):
    """Hidden until `show_message`; the ✕ hides it again and emits `dismissed`."""

    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBanner")
        self.setStyleSheet(
            "#errorBanner { background: #fde2e1; border: 1px solid #e0908a; "
            "border-radius: 4px; } QLabel, QToolButton, QPushButton { color: #6b1510; }")
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 4, 4)
        self.label = self._text_label()
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.clicked.connect(self.dismiss)
        self.details_button = QPushButton("Details")
        self.details_button.setCheckable(True)
        self.details_button.setFlat(True)
        self.details_button.setToolTip("Show the whole message as the library wrote it")
        self.details_button.toggled.connect(self._show_details)
        # The whole text wraps anywhere: C++ signatures are one long token.
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setMaximumHeight(160)
        # Details goes under the line: beside it, it would narrow the line in a dock.
        grid.addWidget(self.label, 0, 0)
        grid.addWidget(self.close_button, 0, 1, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.details_button, 1, 0, Qt.AlignmentFlag.AlignLeft)
        grid.addWidget(self.details, 2, 0, 1, 2)
        grid.setColumnStretch(0, 1)
        self.details.hide()
        self.details_button.hide()
        self.hide()

    @staticmethod
    def _text_label() -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
        # Long paths must wrap or clip, never widen a narrow dock.
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setTextFormat(Qt.TextFormat.PlainText)
        return label

    def show_message(self, message: str) -> None:
        self.label.setText(message)
        full = details_for(message)
        self.details.setPlainText(full)
        self.details_button.setChecked(False)
        self.details_button.setVisible(bool(full))
        self.show()

    def _show_details(self, on: bool) -> None:
        self.details.setVisible(on)

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()

    def message(self) -> str:
        """The text shown, or "" while the banner is hidden."""
        parent = self.parentWidget()
        visible = self.isVisibleTo(parent) if parent is not None else self.isVisible()
        return self.label.text() if visible else ""
