"""numpy arrays to and from QImage, for image previews, mosaics and pasted pictures."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage


def qimage_from_array(arr: np.ndarray) -> QImage:
    """uint8 (H, W) or (H, W, 3) -> a QImage that owns its pixels."""
    a = np.ascontiguousarray(arr)
    h, w = a.shape[:2]
    if a.ndim == 2:
        return QImage(a.data, w, h, a.strides[0], QImage.Format.Format_Grayscale8).copy()
    return QImage(a.data, w, h, a.strides[0], QImage.Format.Format_RGB888).copy()


def array_from_qimage(img: QImage) -> np.ndarray:
    """A QImage (e.g. from the clipboard) -> RGB uint8 (H, W, 3)."""
    rgb = img.convertToFormat(QImage.Format.Format_RGB888)
    h, w, bpl = rgb.height(), rgb.width(), rgb.bytesPerLine()
    buf = np.frombuffer(rgb.constBits(), dtype=np.uint8, count=bpl * h)
    return buf.reshape(h, bpl)[:, : w * 3].reshape(h, w, 3).copy()
