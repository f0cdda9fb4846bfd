"""Names from a model are arbitrary text: make them safe to write into XML and DOT files.

A node may be called "a\\x01b" or carry a terminal escape; XML 1.0 forbids such
characters outright (even as &#1;), so an SVG holding one does not parse. They are shown
as Unicode control pictures instead (\\x1b -> ␛), which keeps them visible and distinct.
"""

from __future__ import annotations

_PICTURES: dict[int, int] = {c: 0x2400 + c for c in range(0x20) if chr(c) not in "\t\n\r"}
_PICTURES[0x7F] = 0x2421  # ␡
_PICTURES.update({c: 0xFFFD for c in range(0x80, 0xA0)})  # C1 controls
_PICTURES.update({0xFFFE: 0xFFFD, 0xFFFF: 0xFFFD})  # not characters in XML


def printable(text: str) -> str:
    """``text`` with control characters (but tab and line breaks) as visible symbols."""
    return text.translate(_PICTURES)
