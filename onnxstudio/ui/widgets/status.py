"""A status bar whose message never runs under its permanent parts (counts, opsets).

QStatusBar paints a temporary message across its whole width, so a long one (an error
naming a file) ran under the right-hand labels. Here the message is a label in the
bar's stretching slot, elided at the end with the whole text in its tooltip; the
``showMessage``/``currentMessage``/``clearMessage`` API stays the same.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QStatusBar, QWidget


class ElidedLabel(QLabel):
    """One line of text, cut with "…" to the width it is given (whole in the tooltip);
    ``mode`` where: at the end, or in the middle (two file names differing at the end)."""

    def __init__(self, parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self.mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        """Shrinks to a few characters: a long text never widens the window."""
        return QSize(min(60, super().sizeHint().width()), super().minimumSizeHint().height())

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text if text else "")

    def shown_text(self) -> str:
        """The text as drawn, cut to the label's width."""
        return self.fontMetrics().elidedText(self.text(), self.mode, self.contentsRect().width())

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        text = self.shown_text()
        painter.setPen(self.palette().windowText().color())
        painter.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft
                                                  | Qt.AlignmentFlag.AlignVCenter), text)

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()


class StatusBar(QStatusBar):
    """QStatusBar with its temporary message in an eliding label (see the module doc)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message_label = ElidedLabel(self)
        self.message_label.setSizePolicy(QSizePolicy.Policy.Ignored,
                                         QSizePolicy.Policy.Preferred)
        self.message_label.setContentsMargins(6, 0, 0, 0)
        self.addWidget(self.message_label, 1)
        self.action_button = QPushButton(self)  # e.g. "Open folder" after an export
        self.action_button.setFlat(True)
        self.action_button.hide()
        self.action_button.clicked.connect(self._run_action)
        self.addWidget(self.action_button)
        self._action: Callable[[], object] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clearMessage)

    def show_action_message(self, text: str, button: str, action: Callable[[], object],
                            timeout: int = 0) -> None:
        """A message with one button beside it (until the message goes)."""
        self.showMessage(text, timeout)
        self._action = action
        self.action_button.setText(button)
        self.action_button.show()

    def _run_action(self) -> None:
        if self._action is not None:
            self._action()

    def showMessage(self, text: str, timeout: int | None = 0) -> None:
        self.message_label.setText(text)
        self._action = None
        self.action_button.hide()
        self._timer.stop()
        if timeout:
            self._timer.start(timeout)
        self.messageChanged.emit(text)

    def clearMessage(self) -> None:
        self._timer.stop()
        self._action = None
        self.action_button.hide()
        if self.message_label.text():
            self.message_label.setText("")
            self.messageChanged.emit("")

    def currentMessage(self) -> str:
        return self.message_label.text()
