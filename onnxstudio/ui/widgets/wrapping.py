"""Labels in a narrow dock must wrap long scoped names (``/a/b/Conv_output_0``) rather
than widen the dock: zero-width break points after their separators, and the way back
to the plain text (for tooltips and tests)."""

from __future__ import annotations

import re


def breakable(text: str) -> str:
    """Zero-width spaces after inner separators (/ _ . : =), not after a decimal point
    ("range [-119.|7" broke a number in two); only for text that is not selectable, as
    they would be copied along."""
    text = re.sub(r"(?<=.)([/_:=]|\.(?!\d))(?=.)", "\\1\u200b", text)
    return "/\u2060" + text[1:] if text.startswith("/") else text  # no break after a lead "/"


def plain(text: str) -> str:
    return text.replace("\u200b", "").replace("\u2060", "")
