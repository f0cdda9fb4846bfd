"""Box sizes from the painter's own text metrics, so text that was given room is whole.

Every width here is measured with :func:`onnxstudio.layout.textmetrics.text_width`,
the table render/ draws with. A box is as wide as its widest line plus padding (and the
+ marker of an expandable box); a line reserves room for at most ``MAX_LABEL_CHARS``
characters, so only longer labels are elided (and the whole text stays in the tooltip
and the Node panel). render/ takes the fonts and the anatomy below from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from onnxstudio.layout.textmetrics import text_width
from onnxstudio.model.formatting import plural

TITLE_FONT_PX = 11  # bold
DETAIL_FONT_PX = 10
SUBTITLE_FONT_PX = 9
EDGE_LABEL_FONT_PX = 9
GROUP_LABEL_FONT_PX = 11  # bold
GROUP_COUNT_FONT_PX = 10
TITLE_LINE_H = 16.0
DETAIL_LINE_H = 14.0
PAD_X = 8.0
PAD_Y = 5.0
MIN_W = 56.0
MARKER_SIZE = 9.0  # the +/− square of expandable boxes and groups
MARKER_W = MARKER_SIZE + 4.0  # what the marker takes from a title's line
SHEET_OFFSET = 3.0  # a collapsed group's second sheet peeking out behind it
MAX_LABEL_CHARS = 40  # longer labels are elided (the whole text is in tooltip and panel)
MAX_DETAILS = 6


def cut_end(text: str, fits: Callable[[str], bool]) -> str:
    """The longest ``text[:k] + "…"`` that ``fits``, cut after a ``×`` when one is near,
    so a shape loses whole dimensions rather than half a number."""
    for k in range(len(text) - 1, 0, -1):
        head = text[:k]
        if not fits(head + "…"):
            continue
        cut = head.rfind("×")
        if cut >= k - 6 and cut > 0:
            head = head[:cut + 1]
        return head + "…" + ("⟩" if "⟨" in head and "⟩" not in head else "")
    return "…"


def reserve(text: str) -> str:
    """The part of ``text`` a box makes room for: all of it up to MAX_LABEL_CHARS."""
    return text if len(text) <= MAX_LABEL_CHARS else text[:MAX_LABEL_CHARS - 1] + "…"


def title_width(text: str) -> float:
    return text_width(reserve(text), TITLE_FONT_PX, bold=True)


def detail_width(text: str) -> float:
    return text_width(reserve(text), DETAIL_FONT_PX)


def fit_details(details: list[str]) -> list[str]:
    """At most MAX_DETAILS lines, each cut at the end past MAX_LABEL_CHARS characters."""
    limit = MAX_LABEL_CHARS
    if len(details) <= MAX_DETAILS and max(map(len, details), default=0) <= limit:
        return list(details)  # nearly every box
    lines = [d if len(d) <= limit else cut_end(d, lambda t: len(t) <= limit) for d in details]
    if len(lines) > MAX_DETAILS:
        lines = [*lines[: MAX_DETAILS - 1], f"… {len(lines) - MAX_DETAILS + 1} more"]
    return lines


def box_size(title: str, details: Sequence[str] = (), subtitle: str = "",
             marker: bool = False) -> tuple[float, float]:
    """(width, height) in px for an operator or graph input/output box showing ``title``
    (beside a + marker when ``marker``) over ``details`` (and a subtitle line)."""
    text = max(title_width(title) + (MARKER_W if marker else 0.0),
               max((detail_width(d) for d in details), default=0.0),
               text_width(reserve(subtitle), SUBTITLE_FONT_PX))
    width = max(MIN_W, text + 2 * PAD_X)
    lines = len(details) + (1 if subtitle else 0)
    return float(-(-width // 1)), 2 * PAD_Y + TITLE_LINE_H + lines * DETAIL_LINE_H


def group_box_size(title: str, count: str) -> tuple[float, float]:
    """(width, height) of a collapsed group: title beside its + marker, count below,
    drawn on a sheet with a second one peeking out ``SHEET_OFFSET`` behind."""
    text = max(title_width(title) + MARKER_W, text_width(reserve(count), DETAIL_FONT_PX))
    width = max(MIN_W, text + 2 * PAD_X) + SHEET_OFFSET
    return float(-(-width // 1)), 2 * PAD_Y + TITLE_LINE_H + DETAIL_LINE_H + SHEET_OFFSET


@lru_cache(maxsize=4096)  # every expanded group asks; labels and counts repeat
def frame_title_width(label: str, node_count: int) -> float:
    """Width an expanded group's frame needs for its title row: − marker, name (bold),
    count; the painter drops the count, then elides the name, only beyond this."""
    count = plural(node_count, "node")
    return (2 * PAD_X + MARKER_SIZE + 5.0 + text_width(reserve(label), GROUP_LABEL_FONT_PX,
                                                       bold=True)
            + 8.0 + text_width(count, GROUP_COUNT_FONT_PX) + 4.0)
