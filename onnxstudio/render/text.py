"""Text sizes and a Qt-free width estimate, so SVG and the screen place text alike.

Widths come from DejaVu Sans advance tables (measured once with Qt), the font both
backends ask for first; sizes are whole pixels so QFont.setPixelSize is exact. A table
instead of QFontMetrics keeps the SVG backend and worker threads free of a QApplication.
"""

from __future__ import annotations

from onnxstudio.layout import labels
from onnxstudio.render.drawing import Font

# Title and detail sizes are the layout's (it sized the boxes for them).
TITLE_FONT = Font(float(labels.TITLE_FONT_PX), bold=True)
SUBTITLE_FONT = Font(9.0)
DETAIL_FONT = Font(float(labels.DETAIL_FONT_PX))
EDGE_LABEL_FONT = Font(9.0)
GROUP_LABEL_FONT = Font(11.0, bold=True)
GROUP_COUNT_FONT = Font(10.0)

ASCENT = 0.928  # of the pixel size, DejaVu Sans
DESCENT = 0.236

# Advance widths of ASCII 32..126 in em, DejaVu Sans regular and bold.
_REGULAR = (
    0.318,
    0.401,
    0.46,
    0.838,
    0.636,
    0.95,
    0.78,
    0.275,
    0.39,
    0.39,
    0.5,
    0.838,
    0.318,
    0.361,
    0.318,
    0.337,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.636,
    0.337,
    0.337,
    0.838,
    0.838,
    0.838,
    0.531,
    1.0,
    0.684,
    0.686,
    0.698,
    0.77,
    0.632,
    0.575,
    0.775,
    0.752,
    0.295,
    0.295,
    0.656,
    0.557,
    0.863,
    0.748,
    0.787,
    0.603,
    0.787,
    0.695,
    0.635,
    0.611,
    0.732,
    0.684,
    0.989,
    0.685,
    0.611,
    0.685,
    0.39,
    0.337,
    0.39,
    0.838,
    0.5,
    0.5,
    0.613,
    0.635,
    0.55,
    0.635,
    0.615,
    0.352,
    0.635,
    0.634,
    0.278,
    0.278,
    0.579,
    0.278,
    0.974,
    0.634,
    0.612,
    0.635,
    0.635,
    0.411,
    0.521,
    0.392,
    0.634,
    0.592,
    0.818,
    0.592,
    0.592,
    0.525,
    0.636,
    0.337,
    0.636,
    0.838,
)
_BOLD = (
    0.348,
    0.456,
    0.521,
    0.838,
    0.696,
    1.002,
    0.872,
    0.306,
    0.457,
    0.457,
    0.523,
    0.838,
    0.38,
    0.415,
    0.38,
    0.365,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.696,
    0.4,
    0.4,
    0.838,
    0.838,
    0.838,
    0.58,
    1.0,
    0.774,
    0.762,
    0.734,
    0.83,
    0.683,
    0.683,
    0.821,
    0.837,
    0.372,
    0.372,
    0.775,
    0.637,
    0.995,
    0.837,
    0.85,
    0.733,
    0.85,
    0.77,
    0.72,
    0.682,
    0.812,
    0.774,
    1.103,
    0.771,
    0.724,
    0.725,
    0.457,
    0.365,
    0.457,
    0.838,
    0.5,
    0.5,
    0.675,
    0.716,
    0.593,
    0.716,
    0.678,
    0.435,
    0.716,
    0.712,
    0.343,
    0.343,
    0.665,
    0.343,
    1.042,
    0.712,
    0.687,
    0.716,
    0.716,
    0.493,
    0.595,
    0.478,
    0.712,
    0.652,
    0.924,
    0.645,
    0.652,
    0.582,
    0.712,
    0.365,
    0.712,
    0.838,
)
_WIDE = {
    "×": (0.838, 0.838),
    "⟨": (0.39, 0.457),
    "⟩": (0.39, 0.457),
    "…": (1.0, 1.0),
    "α": (0.659, 0.687),
    "β": (0.638, 0.716),
    "ε": (0.54, 0.557),
    "−": (0.838, 0.838),
    "→": (0.838, 0.838),
    "·": (0.318, 0.38),
}
_OTHER = 0.75  # any other non-ASCII character


def text_width(text: str, font: Font) -> float:
    """Estimated advance of ``text`` in drawing units."""
    table = _BOLD if font.bold else _REGULAR
    if font.mono:
        return 0.602 * font.size * len(text)
    weight = 1 if font.bold else 0
    total = 0.0
    for ch in text:
        code = ord(ch) - 32
        if 0 <= code < len(table):
            total += table[code]
        else:
            wide = _WIDE.get(ch)
            total += wide[weight] if wide else _OTHER
    return total * font.size


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
