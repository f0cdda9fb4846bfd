"""How one box is drawn: operator, graph input/output, collapsed group; plus markers.

The anatomy comes from :mod:`onnxstudio.layout.sizing`, which sized every box for
exactly this text with the same metrics, so elision here only ever shortens labels
longer than ``sizing.MAX_LABEL_CHARS`` characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from onnxstudio.layout import sizing
from onnxstudio.layout.types import Box
from onnxstudio.render import text as tx
from onnxstudio.render.drawing import Font, Stroke, Surface
from onnxstudio.render.theme import NodeStyle, Theme

NAME_CAPTION_WIDTH = 220.0  # a node's name above a narrow box may be this wide

if TYPE_CHECKING:  # the overlay module is only needed when there is one
    from onnxstudio.render.overlay import Overlay

# height = 2*PAD_Y + TITLE_LINE_H + lines * DETAIL_LINE_H (layout/sizing.py)
RADIUS = 4.0
HEADER_HEIGHT = sizing.PAD_Y + sizing.TITLE_LINE_H
SUBTITLE_HEIGHT = sizing.DETAIL_LINE_H  # one detail line
DETAIL_LINE = sizing.DETAIL_LINE_H
BODY_PAD_TOP = sizing.PAD_Y / 2
PAD_X = sizing.PAD_X
TEXT_INSET = 4.0  # text may use part of the padding before it is elided
MARKER_SIZE = sizing.MARKER_SIZE
BADGE_FONT = Font(9.0, bold=True)
BADGE_FILL = "#2b2b2b"
BADGE_TEXT = "#ffffff"


@dataclass
class PaintState:
    """What the viewer adds on top of the layout: selection, hover, flash, options."""

    selected: frozenset[str] = frozenset()
    hovered: str | None = None
    related_boxes: frozenset[str] = frozenset()  # neighbours of the hovered box
    related_edges: frozenset[int] = frozenset()  # its incoming/outgoing edges
    selected_edges: frozenset[int] = frozenset()  # edges of the selected boxes
    flash: str | None = None  # briefly ringed after centerOn
    highlighted: frozenset[str] = frozenset()  # search matches
    show_names: bool = False
    show_edge_labels: bool = True
    overlay: Overlay | None = None  # profile heatmap or divergence colours, with badges
    extra: dict[str, object] = field(default_factory=dict)


def baseline(height: float, size: float) -> float:
    """Offset from a line box's top to the baseline that centres a font of ``size``."""
    return (height + size * (tx.ASCENT - tx.DESCENT)) / 2


def marker(s: Surface, x: float, y: float, plus: bool, color: str) -> None:
    """A small boxed + (collapsed, double-click expands) or − (expanded)."""
    m = MARKER_SIZE
    s.rounded_rect(x, y, m, m, 1.5, None, Stroke(color, 1.0))
    cy = y + m / 2
    cx = x + m / 2
    s.path((x + 2.0, cy), [((x + 2.0, cy), (x + m - 2.0, cy), (x + m - 2.0, cy))],
           Stroke(color, 1.2))
    if plus:
        s.path((cx, y + 2.0), [((cx, y + 2.0), (cx, y + m - 2.0), (cx, y + m - 2.0))],
               Stroke(color, 1.2))


def badge(s: Surface, b: Box, text: str) -> None:
    """The overlay's number (time, verdict) in a pill on the box's top-right corner,
    so it stays readable whatever colour the box took."""
    w = tx.text_width(text, BADGE_FONT) + 8.0
    h = BADGE_FONT.size + 5.0
    x = b.x + b.width - w + 4.0
    y = b.y - h / 2 - 1.0
    s.rounded_rect(x, y, w, h, h / 2, BADGE_FILL, None)
    s.text(x + w / 2, y + baseline(h, BADGE_FONT.size), text, BADGE_FONT, BADGE_TEXT, "middle")


def ringed(b: Box, state: PaintState) -> bool:
    """Whether :func:`halo` draws a ring around ``b``."""
    i = b.id
    return (i == state.flash or i == state.hovered or i in state.selected
            or i in state.highlighted or i in state.related_boxes)


def halo(s: Surface, t: Theme, b: Box, state: PaintState) -> None:
    """Rings around a flashed, matched, selected or hovered box."""
    rings: list[tuple[str, float, float]] = []
    if b.id == state.flash:
        rings.append((t.flash, 6.0, 4.0))
    elif b.id in state.highlighted:
        rings.append((t.flash, 4.0, 2.5))
    if b.id in state.selected:
        rings.append((t.selection, 2.5, 2.5))
    if b.id == state.hovered:
        rings.append((t.hover, 2.0, 2.0))
    elif b.id in state.related_boxes:
        rings.append((t.hover, 1.5, 1.5))
    for col, grow, width in rings:
        s.rounded_rect(b.x - grow, b.y - grow, b.width + 2 * grow, b.height + 2 * grow,
                       RADIUS + grow, None, Stroke(col, width))


def op_box(s: Surface, t: Theme, b: Box, style: NodeStyle, state: PaintState,
           titles: bool, details: bool, caption_shift: float = 0.0) -> None:
    """An operator: coloured header with the op type, white body with detail lines; its
    name, when shown and not inside, above it from ``caption_shift`` right of its left
    edge (past the arrows entering its top)."""
    lines = b.details
    # The name goes inside the header when the layout reserved a line for it,
    # otherwise it is drawn as a caption just above the box.
    need = HEADER_HEIGHT + DETAIL_LINE * len(lines) + 2 * BODY_PAD_TOP
    names = state.show_names and bool(b.subtitle)
    inside = names and b.height >= need + SUBTITLE_HEIGHT - 0.5
    header = HEADER_HEIGHT + (SUBTITLE_HEIGHT if inside else 0.0)
    # Without readable detail text (small zoom) the whole box takes the category
    # colour rather than showing an empty white body.
    has_body = details and bool(lines) and b.height > header + 4.0
    if has_body:
        s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, t.node_body, None)
        s.rounded_rect(b.x, b.y, b.width, header, RADIUS, style.fill, None)
        s.rect(b.x, b.y + header - RADIUS, b.width, RADIUS, style.fill, None)
    else:
        header = b.height
        s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, style.fill, None)
    s.rounded_rect(b.x, b.y, b.width, b.height, RADIUS, None, Stroke(style.border, 1.0))
    marker_w = 0.0
    if b.expandable:
        marker_w = sizing.MARKER_W
        top = b.y + (min(header, HEADER_HEIGHT) - MARKER_SIZE) / 2
        marker(s, b.x + b.width - PAD_X / 2 - MARKER_SIZE, top, True, style.text)
    if not titles:
        return
    title_h = HEADER_HEIGHT if has_body or inside else b.height
    title = tx.elide(b.title, tx.TITLE_FONT, b.width - 2 * TEXT_INSET - marker_w)
    s.text(b.x + b.width / 2 - marker_w / 2, b.y + baseline(title_h, tx.TITLE_FONT.size),
           title, tx.TITLE_FONT, style.text, "middle")
    if inside:
        sub = tx.elide(b.subtitle, tx.SUBTITLE_FONT, b.width - 2 * TEXT_INSET)
        base = b.y + HEADER_HEIGHT - 3.0 + baseline(SUBTITLE_HEIGHT, tx.SUBTITLE_FONT.size)
        s.text(b.x + b.width / 2, base, sub, tx.SUBTITLE_FONT, t.node_subtitle_text, "middle")
    elif names:
        sub = tx.elide(b.subtitle, tx.SUBTITLE_FONT, max(b.width, NAME_CAPTION_WIDTH))
        x, size = b.x + caption_shift, tx.SUBTITLE_FONT.size
        # on the edge labels' backdrop: a group's frame it runs across stays behind it
        s.rect(x, b.y - 3.0 - size * tx.ASCENT - 1.0, tx.text_width(sub, tx.SUBTITLE_FONT) + 2.0,
               size * (tx.ASCENT + tx.DESCENT) + 1.0, t.edge_label_bg, None)
        s.text(x + 1.0, b.y - 3.0, sub, tx.SUBTITLE_FONT, t.edge_label)
    if has_body:
        _detail_lines(s, b, b.y + header, t.node_body_text)


def _detail_lines(s: Surface, b: Box, top: float, color: str) -> None:
    font = tx.DETAIL_FONT
    y = top + BODY_PAD_TOP
    for line in b.details:
        if y + DETAIL_LINE > b.y + b.height + 0.5:
            break
        text = tx.elide_end(line, font, b.width - PAD_X - TEXT_INSET)
        s.text(b.x + PAD_X, y + baseline(DETAIL_LINE, font.size), text, font, color)
        y += DETAIL_LINE


def io_box(s: Surface, b: Box, style: NodeStyle, titles: bool, details: bool) -> None:
    """A graph input or output: a pill with the tensor name over its type."""
    r = min(b.height / 2, 10.0)
    s.rounded_rect(b.x, b.y, b.width, b.height, r, style.fill, Stroke(style.border, 1.0))
    if not titles:
        return
    font = tx.TITLE_FONT
    show_details = details and bool(b.details) and b.height >= HEADER_HEIGHT + DETAIL_LINE
    title_h = HEADER_HEIGHT if show_details else b.height
    title = tx.elide(b.title, font, b.width - 2 * TEXT_INSET)
    s.text(b.x + b.width / 2, b.y + baseline(title_h, font.size), title, font, style.text,
           "middle")
    if not show_details:
        return
    y = b.y + HEADER_HEIGHT - 2.0
    for line in b.details:
        if y + DETAIL_LINE > b.y + b.height + 0.5:
            break
        text = tx.elide_end(line, tx.DETAIL_FONT, b.width - 2 * TEXT_INSET)
        base = y + baseline(DETAIL_LINE, tx.DETAIL_FONT.size)
        s.text(b.x + b.width / 2, base, text, tx.DETAIL_FONT, style.text, "middle")
        y += DETAIL_LINE


def group_box(s: Surface, b: Box, style: NodeStyle, titles: bool) -> None:
    """A collapsed group: a second sheet peeking out behind says "there is more inside"."""
    off = sizing.SHEET_OFFSET
    s.rounded_rect(b.x + off, b.y + off, b.width - off, b.height - off, RADIUS, style.fill,
                   Stroke(style.border, 1.0))
    w, h = b.width - off, b.height - off
    s.rounded_rect(b.x, b.y, w, h, RADIUS, style.fill, Stroke(style.border, 1.2))
    marker(s, b.x + w - PAD_X / 2 - MARKER_SIZE, b.y + 5.0, True, style.text)
    if not titles:
        return
    font = tx.TITLE_FONT
    sub = b.subtitle
    title_h = HEADER_HEIGHT if sub and h >= HEADER_HEIGHT + DETAIL_LINE else h
    title = tx.elide(b.title, font, w - 2 * PAD_X - MARKER_SIZE)
    s.text(b.x + w / 2 - MARKER_SIZE / 2, b.y + baseline(title_h, font.size), title, font,
           style.text, "middle")
    if title_h < h:
        base = b.y + HEADER_HEIGHT - 2.0 + baseline(DETAIL_LINE, tx.DETAIL_FONT.size)
        sub = tx.elide(sub, tx.DETAIL_FONT, w - 2 * PAD_X)
        s.text(b.x + w / 2, base, sub, tx.DETAIL_FONT, style.text, "middle")
