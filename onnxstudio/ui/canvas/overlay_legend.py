"""The key of a canvas overlay (heatmap, divergence): what the colours mean, and a way out.

Floats in the canvas' bottom-left corner (the minimap holds the bottom-right one) so
the colours can always be read against their scale without opening a panel.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.render.overlay import Overlay

CORNER_MARGIN = 12


class OverlayLegend(QFrame):
    """Title, colour swatches low to high, and ✕ to clear the overlay."""

    closed = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("overlayLegend")
        self.setStyleSheet(
            "#overlayLegend { background: palette(base); border: 1px solid palette(mid);"
            " border-radius: 6px; }")
        outer = QVBoxLayout(self)
        # always as large as its title and captions need (it was clipped to a stale size)
        outer.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)
        outer.setContentsMargins(8, 4, 4, 6)
        outer.setSpacing(3)
        head = QHBoxLayout()
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: 600;")
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Clear the overlay (the panel keeps its results)")
        close.clicked.connect(self.closed)
        head.addWidget(self.title, 1)
        head.addWidget(close)
        outer.addLayout(head)
        self.swatches = QHBoxLayout()
        self.swatches.setSpacing(6)
        outer.addLayout(self.swatches)
        self.hide()

    def show_overlay(self, overlay: Overlay | None) -> None:
        while self.swatches.count():
            item = self.swatches.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()
        if overlay is None:
            self.hide()
            return
        self.title.setText(overlay.data.title)
        added: list[QLabel] = []
        for colour, caption in overlay.legend:
            chip = QLabel()
            chip.setFixedSize(14, 14)
            chip.setStyleSheet(f"background: {colour}; border: 1px solid #00000040;"
                               " border-radius: 2px;")
            self.swatches.addWidget(chip)
            text = QLabel(caption)
            text.setStyleSheet("font-size: 11px;")
            self.swatches.addWidget(text)
            added += [chip, text]
        self.swatches.addStretch(1)
        self.show()
        # Widgets added to a shown legend would only appear (and count for its size) on
        # the next event loop pass, and a longer key than the last one be cut off.
        for label in added:
            label.show()
        self.adjustSize()
        self.reposition()
        self.raise_()

    def reposition(self) -> None:
        parent = self.parentWidget()
        if parent is None:
            return
        area = parent.rect()
        self.move(area.left() + CORNER_MARGIN, area.bottom() - self.height() - CORNER_MARGIN)
