"""The QPainter surface for exports running on a worker thread.

render's QtSurface caches QFont/QFontMetricsF objects in a module-wide dict that the
canvas uses on the GUI thread; Qt's font classes are reentrant, not thread-safe, so an
export painting at the same time keeps fonts of its own (one cache per export).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtGui import QFont, QFontMetricsF, QPainter

from onnxstudio.render.drawing import FONT_FAMILY, Anchor, Font
from onnxstudio.render.qt_surface import QtSurface, qcolor


class ExportQtSurface(QtSurface):
    """QtSurface whose fonts belong to this surface's thread alone."""

    def __init__(self, painter: QPainter) -> None:
        super().__init__(painter)
        self._fonts: dict[Font, tuple[QFont, QFontMetricsF]] = {}

    def _font(self, font: Font) -> tuple[QFont, QFontMetricsF]:
        hit = self._fonts.get(font)
        if hit is None:  # same recipe as render.qt_surface.qfont, so text looks the same
            f = QFont("DejaVu Sans Mono" if font.mono else FONT_FAMILY)
            f.setPixelSize(max(1, round(font.size)))
            f.setBold(font.bold)
            f.setItalic(font.italic)
            f.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
            f.setStyleStrategy(QFont.StyleStrategy.PreferAntialias)
            hit = (f, QFontMetricsF(f))
            self._fonts[font] = hit
        return hit

    def text(self, x: float, y: float, text: str, font: Font, color: str,
             anchor: Anchor = "start") -> None:
        f, metrics = self._font(font)
        if anchor != "start":
            w = metrics.horizontalAdvance(text)
            x -= w / 2 if anchor == "middle" else w
        self.p.setFont(f)
        self.p.setPen(qcolor(color))
        self.p.drawText(QPointF(x, y), text)
