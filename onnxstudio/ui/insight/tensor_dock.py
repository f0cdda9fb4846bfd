"""The tensor dock: which value of the selected node to show, "capture all", and the viewer.

The viewer (`TensorView`) shows one array; this strip above it lists the outputs of the
node the user clicked, so a multi-output node (Split, LSTM, TopK) can show each of them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.runner.intermediates import DEFAULT_CAP_BYTES
from onnxstudio.ui.insight.tensor_view import TensorView


class TensorDock(QWidget):
    """Value chooser + TensorView; asks for captures through signals."""

    valueChosen = Signal(str)
    captureAllRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TensorDock")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.node_label = QLabel("No node selected")
        self.node_label.setStyleSheet("font-weight: 600;")
        self.node_label.setWordWrap(True)
        # Long scoped names wrap; they must never widen the dock.
        self.node_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.node_label)
        row = QHBoxLayout()
        self.value_combo = QComboBox()
        self.value_combo.setMinimumContentsLength(8)
        self.value_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.value_combo.setToolTip("Which output of the selected node to show")
        self.value_combo.activated.connect(
            lambda i: self.valueChosen.emit(self.value_combo.itemText(i)))
        self.capture_all_button = QPushButton("Capture all")
        self.capture_all_button.setToolTip(
            "Capture every intermediate tensor of the last run at once (up to "
            f"{DEFAULT_CAP_BYTES / 2**30:.0f} GiB, the rest is skipped with a warning), "
            "so clicking around is instant")
        self.capture_all_button.clicked.connect(self.captureAllRequested)
        row.addWidget(self.value_combo, 1)
        row.addWidget(self.capture_all_button)
        lay.addLayout(row)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("QLabel { background: #fff4ce; border: 1px solid #e0c060;"
                                " border-radius: 4px; padding: 3px; color: #5c4400; }")
        self.note.hide()
        lay.addWidget(self.note)
        self.view = TensorView()
        lay.addWidget(self.view, 1)

    def set_node(self, caption: str | None, outputs: list[str]) -> None:
        """Offer ``outputs`` (of the node ``caption`` names; None: a clicked edge)."""
        self.node_label.setText(caption or ("Edge" if outputs else "No node selected"))
        self.value_combo.clear()
        self.value_combo.addItems(outputs)
        self.value_combo.setEnabled(len(outputs) > 1)

    def show_tensor(self, name: str, array: Any) -> None:
        index = self.value_combo.findText(name)
        if index >= 0:
            self.value_combo.setCurrentIndex(index)
        self.view.show_tensor(name, array, self.node_label.text())

    def clear(self, message: str | None = None) -> None:
        self.view.clear(message)

    def set_busy(self, message: str) -> None:
        self.view.set_busy(message)

    def show_error(self, message: str) -> None:
        self.view.show_error(message)

    def reset(self, message: str | None = None) -> None:
        """A new run or model: what was shown belongs to the old one."""
        self.note.hide()
        self.view.clear(message)

    def show_warning(self, message: str) -> None:
        self.note.setText(message)
        self.note.show()

    def show_captured(self, count: int) -> None:
        self.view.clear(f"Captured {count} tensors of the last run: click any node or "
                        "edge to see its values")
