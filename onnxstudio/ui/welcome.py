"""The page shown when no model is open: a way in for every kind of first-time user."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.resources import resource


class WelcomePage(QWidget):
    openClicked = Signal()
    sampleClicked = Signal()
    recentClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(False)  # the main window takes drops
        icon = QLabel()
        icon.setPixmap(QIcon(str(resource("icons", "onnxstudio.svg"))).pixmap(72, 72))
        icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("onnxstudio")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setStyleSheet("font-size: 26px; font-weight: 600;")
        tagline = QLabel("See, inspect, run and export ONNX models.\n"
                         "Drop an .onnx file anywhere in this window, or:")
        tagline.setAlignment(Qt.AlignmentFlag.AlignCenter)
        tagline.setStyleSheet("color: palette(placeholder-text); font-size: 13px;")

        self.open_button = QPushButton("Open model…")
        self.open_button.setDefault(True)
        self.open_button.clicked.connect(self.openClicked)
        self.sample_button = QPushButton("Open the sample model")
        self.sample_button.clicked.connect(self.sampleClicked)
        for b in (self.open_button, self.sample_button):
            b.setMinimumWidth(200)
            b.setMinimumHeight(34)
        buttons = QHBoxLayout()
        buttons.addStretch()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch()

        self.recent_title = QLabel("Recent files")
        self.recent_title.setStyleSheet("font-weight: 600; margin-top: 18px;")
        self.recent = QListWidget()
        self.recent.setFrameShape(QFrame.Shape.NoFrame)
        self.recent.setMaximumWidth(640)
        self.recent.setMinimumWidth(420)
        # long folders are cut in the middle (whole path in the tooltip), never scrolled
        self.recent.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.recent.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.recent.setMaximumHeight(240)
        self.recent.itemActivated.connect(lambda item: self.recentClicked.emit(
            item.data(Qt.ItemDataRole.UserRole)))
        self.recent.itemClicked.connect(lambda item: self.recentClicked.emit(
            item.data(Qt.ItemDataRole.UserRole)))
        self.no_recent = QLabel("Files you open appear here.")
        self.no_recent.setStyleSheet("color: palette(placeholder-text);")

        column = QVBoxLayout()
        column.addStretch(2)
        column.addWidget(icon)
        column.addWidget(title)
        column.addWidget(tagline)
        column.addSpacing(12)
        column.addLayout(buttons)
        column.addWidget(self.recent_title, 0, Qt.AlignmentFlag.AlignHCenter)
        column.addWidget(self.recent, 0, Qt.AlignmentFlag.AlignHCenter)
        column.addWidget(self.no_recent, 0, Qt.AlignmentFlag.AlignHCenter)
        column.addStretch(3)
        self.setLayout(column)

    def set_recent(self, files: list[str]) -> None:
        self.recent.clear()
        for path in files:
            p = Path(path)
            item = QListWidgetItem(f"{p.name}    —    {p.parent}")
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            if not p.exists():
                item.setForeground(Qt.GlobalColor.gray)
                item.setText(f"{p.name}    —    missing: {p.parent}")
            self.recent.addItem(item)
        self.recent.setVisible(bool(files))
        self.no_recent.setVisible(not files)
