"""What a detector or segmenter found, drawn on the user's image: boxes above an adjustable
threshold (NMS already applied by the runner) or a class mask, with the list beside it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from onnxstudio.runner.draw import draw_detections, draw_mask
from onnxstudio.runner.pipeline import RunOutcome
from onnxstudio.ui.widgets.images import qimage_from_array

PREVIEW = 420  # longest side of the overlay in the panel
MAX_LISTED = 12


class DetectionView(QWidget):
    """Overlay + threshold slider + the list of what is shown; hidden for other models."""

    thresholdChanged = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._outcome: RunOutcome | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)
        row = QHBoxLayout()
        self.threshold_label = QLabel()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(5, 100)
        self.slider.setToolTip("Lowest score shown (boxes are already merged by NMS)")
        row.addWidget(QLabel("Threshold"))
        row.addWidget(self.slider, 1)
        row.addWidget(self.threshold_label)
        self.threshold_row = QWidget()
        self.threshold_row.setLayout(row)
        lay.addWidget(self.threshold_row)
        self.image = QLabel()
        self.image.setObjectName("detection-overlay")
        self.image.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.image.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.image)
        self.found = QLabel()
        self.found.setWordWrap(True)
        self.found.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.found)
        self.slider.valueChanged.connect(self._on_slider)
        self.hide()

    def threshold(self) -> float:
        return self.slider.value() / 100.0

    def set_threshold(self, value: float) -> None:
        self.slider.setValue(round(max(0.05, min(1.0, value)) * 100))

    def show_outcome(self, outcome: RunOutcome | None) -> None:
        """Show what ``outcome`` found, or hide when it is not a detector/segmenter answer."""
        self._outcome = outcome
        pre = outcome.preprocessed if outcome else None
        found = outcome is not None and (outcome.detections is not None
                                         or outcome.segmentation is not None)
        if not found or pre is None or pre.original is None:
            self.hide()
            return
        assert outcome is not None
        if outcome.detections is not None:
            self.set_threshold(outcome.detections.threshold)
        self.threshold_row.setVisible(outcome.detections is not None)
        self._redraw()
        self.show()

    def shown_count(self) -> int:
        out = self._outcome
        return len(out.detections.above(self.threshold())) if out and out.detections else 0

    def _on_slider(self, _value: int) -> None:
        self.threshold_label.setText(f"{self.threshold():.2f}")
        if self._outcome is not None and self._outcome.detections is not None:
            self._redraw()
            self.thresholdChanged.emit(self.threshold())

    def _redraw(self) -> None:
        out = self._outcome
        assert out is not None and out.preprocessed is not None
        original = out.preprocessed.original
        assert original is not None
        if out.detections is not None:
            shown = out.detections.above(self.threshold())
            pixels = draw_detections(original, shown)
            self.caption.setText(
                f"Detector — {out.detections.description}: {len(shown)} above "
                f"{self.threshold():.2f} after NMS (IoU {out.detections.iou:g}); boxes in "
                f"the original image's pixels ({original.shape[1]}×{original.shape[0]})")
            lines = ["{:.3f}  {}  [{:.0f}, {:.0f}, {:.0f}, {:.0f}]".format(d.score, d.label, *d.box)
                     for d in shown[:MAX_LISTED]]
            if len(shown) > MAX_LISTED:
                lines.append(f"… and {len(shown) - MAX_LISTED} more")
            self.found.setText("\n".join(lines) or "Nothing above the threshold")
        else:
            seg = out.segmentation
            assert seg is not None
            pixels = draw_mask(original, seg)
            self.caption.setText(f"Segmenter — {seg.description}: classes by area")
            self.found.setText("\n".join(f"{frac:6.1%}  {label}"
                                         for _, label, frac in seg.areas[:MAX_LISTED]))
        pix = QPixmap.fromImage(qimage_from_array(pixels))
        self.image.setPixmap(pix.scaled(PREVIEW, PREVIEW, Qt.AspectRatioMode.KeepAspectRatio,
                                        Qt.TransformationMode.SmoothTransformation))
