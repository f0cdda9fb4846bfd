"""The pages a model tab shows instead of its graph: opening (with progress and a way
out) and a model that could not be opened (the whole reason, to read and to copy)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.ui.widgets.wrapping import breakable


class ProgressPage(QWidget):
    """Shown while a model opens: what is happening, how far, and a way out."""

    cancelClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.title.font()
        font.setPixelSize(15)
        font.setBold(True)
        self.title.setFont(font)
        self.stage = QLabel("Reading")
        self.stage.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setFixedWidth(360)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self.cancelClicked)
        box = QVBoxLayout(self)
        box.addStretch(2)
        box.addWidget(self.title)
        box.addWidget(self.stage)
        row = QHBoxLayout()
        row.addStretch()
        row.addWidget(self.bar)
        row.addStretch()
        box.addLayout(row)
        row2 = QHBoxLayout()
        row2.addStretch()
        row2.addWidget(self.cancel)
        row2.addStretch()
        box.addLayout(row2)
        box.addStretch(3)


class ErrorPage(QWidget):
    """A model that could not be opened: the whole reason, wrapped, with a way to copy
    it (for a bug report) and to close the tab; the window stays usable."""

    closeClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headline = QLabel("This model could not be opened")
        font = self.headline.font()
        font.setPixelSize(16)
        font.setBold(True)
        self.headline.setFont(font)  # a font, not a style sheet: follows theme switches
        self.headline.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setSizePolicy(QSizePolicy.Policy.Preferred,
                                   QSizePolicy.Policy.MinimumExpanding)
        self.message.setMaximumWidth(720)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the file name and the reason")
        self.copy_button.clicked.connect(self._copy)
        close = QPushButton("Close tab")
        close.clicked.connect(self.closeClicked)
        self._text = ""
        box = QVBoxLayout(self)
        box.setContentsMargins(24, 24, 24, 24)
        box.addStretch(2)
        box.addWidget(self.headline)
        box.addSpacing(6)
        # In a row, not added with an alignment: an aligned label gets its one-line size
        # hint and the wrapped reason is cut after the first line.
        line = QHBoxLayout()
        line.addStretch(1)
        line.addWidget(self.message, 8)
        line.addStretch(1)
        box.addLayout(line)
        box.addSpacing(10)
        row = QHBoxLayout()
        row.addStretch()
        row.addWidget(self.copy_button)
        row.addWidget(close)
        row.addStretch()
        box.addLayout(row)
        box.addStretch(3)

    def set_message(self, message: str) -> None:
        """``file: reason``; long paths may wrap anywhere after a separator."""
        self._text = message
        self.message.setText(breakable(message))
        self.message.setToolTip(message)

    def text(self) -> str:
        return self._text

    def _copy(self) -> None:
        QApplication.clipboard().setText(self._text)
