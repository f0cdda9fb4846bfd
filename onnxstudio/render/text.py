"""Fonts of the drawing and their widths, from the layout's own metrics table.

Widths come from :mod:`onnxstudio.layout.textmetrics` (DejaVu Sans advances measured
once with Qt), the very numbers layout sized the boxes with; sizes are whole pixels so
QFont.setPixelSize is exact. A table instead of QFontMetrics keeps the SVG backend and
worker threads free of a QApplication.
"""

from __future__ import annotations

from onnxstudio.layout import sizing, textmetrics
from onnxstudio.render.drawing import Font

# The sizes layout reserved room for.
TITLE_FONT = Font(float(sizing.TITLE_FONT_PX), bold=True)
SUBTITLE_FONT = Font(float(sizing.SUBTITLE_FONT_PX))
DETAIL_FONT = Font(float(sizing.DETAIL_FONT_PX))
EDGE_LABEL_FONT = Font(float(sizing.EDGE_LABEL_FONT_PX))
GROUP_LABEL_FONT = Font(float(sizing.GROUP_LABEL_FONT_PX), bold=True)
GROUP_COUNT_FONT = Font(float(sizing.GROUP_COUNT_FONT_PX))

ASCENT = textmetrics.ASCENT
DESCENT = textmetrics.DESCENT


def text_width(text: str, font: Font) -> float:
    """Advance of ``text`` in drawing units."""
    return textmetrics.text_width(text, font.size, font.bold, font.mono)


def elide(text: str, font: Font, max_width: float) -> str:
    """``text`` cut in the middle with "…" to fit ``max_width`` (names keep both ends)."""
    if max_width <= 0:
        return ""
    if text_width(text, font) <= max_width:
        return text
    keep = len(text)
    while keep > 1:
        keep -= max(1, keep // 8)
        head = (keep + 1) // 2
        tail = keep - head
        cand = text[:head] + "…" + (text[-tail:] if tail else "")
        if text_width(cand, font) <= max_width:
            return cand
    return "…" if text_width("…", font) <= max_width else ""


def elide_end(text: str, font: Font, max_width: float) -> str:
    """``text`` cut at the end with "…" (shapes and values read left to right)."""
    if text_width(text, font) <= max_width:
        return text
    return sizing.cut_end(text, lambda t: text_width(t, font) <= max_width)
