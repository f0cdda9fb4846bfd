"""Text widths without a font engine, shared by layout (box sizes) and render (painting).

Advance widths of DejaVu Sans, the font both drawing backends ask for first, measured
once with Qt (``QFontMetricsF``, hinting off) and kept here as tables: layout sizes every
box from exactly the numbers the painter later elides with, so a label that was given
room is never cut, and neither side needs a QApplication. Measured against Qt, the
tables err on the wide side by under 0.5 %.
"""

from __future__ import annotations

from functools import lru_cache

ASCENT = 0.928  # of the pixel size, DejaVu Sans
DESCENT = 0.236
MONO_ADVANCE = 0.602  # DejaVu Sans Mono, every glyph

# Advance widths of ASCII 32..126 in em, DejaVu Sans regular and bold.
_REGULAR = (
    0.318, 0.401, 0.46, 0.838, 0.636, 0.95, 0.78, 0.275, 0.39, 0.39, 0.5, 0.838,
    0.318, 0.361, 0.318, 0.337, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636,
    0.636, 0.636, 0.337, 0.337, 0.838, 0.838, 0.838, 0.531, 1.0, 0.684, 0.686, 0.698,
    0.77, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787,
    0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.39,
    0.337, 0.39, 0.838, 0.5, 0.5, 0.613, 0.635, 0.55, 0.635, 0.615, 0.352, 0.635,
    0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612, 0.635, 0.635, 0.411, 0.521,
    0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337, 0.636, 0.838,
)
_BOLD = (
    0.348, 0.456, 0.521, 0.838, 0.696, 1.002, 0.872, 0.306, 0.457, 0.457, 0.523, 0.838,
    0.38, 0.415, 0.38, 0.365, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696,
    0.696, 0.696, 0.4, 0.4, 0.838, 0.838, 0.838, 0.58, 1.0, 0.774, 0.762, 0.734,
    0.83, 0.683, 0.683, 0.821, 0.837, 0.372, 0.372, 0.775, 0.637, 0.995, 0.837, 0.85,
    0.733, 0.85, 0.77, 0.72, 0.682, 0.812, 0.774, 1.103, 0.771, 0.724, 0.725, 0.457,
    0.365, 0.457, 0.838, 0.5, 0.5, 0.675, 0.716, 0.593, 0.716, 0.678, 0.435, 0.716,
    0.712, 0.343, 0.343, 0.665, 0.343, 1.042, 0.712, 0.687, 0.716, 0.716, 0.493, 0.595,
    0.478, 0.712, 0.652, 0.924, 0.645, 0.652, 0.582, 0.712, 0.365, 0.712, 0.838,
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
_CJK = 1.0  # from U+2E80 on: wide glyphs of a fallback font


def text_width(text: str, size: float, bold: bool = False, mono: bool = False) -> float:
    """Advance of ``text`` at ``size`` px (DejaVu Sans, or DejaVu Sans Mono)."""
    if mono:
        return MONO_ADVANCE * size * len(text)
    return _em_width(text, bold) * size


# Layout sizes every box by its texts and the painter elides the same texts again, and
# most of them repeat (shapes, op types): a lookup is a fraction of summing the glyphs.
@lru_cache(maxsize=1 << 16)
def _em_width(text: str, bold: bool) -> float:
    table = _BOLD if bold else _REGULAR
    weight = 1 if bold else 0
    total = 0.0
    for ch in text:
        code = ord(ch) - 32
        if 0 <= code < 95:
            total += table[code]
        else:
            wide = _WIDE.get(ch)
            total += wide[weight] if wide else (_CJK if ch >= "\u2e80" else _OTHER)
    return total
