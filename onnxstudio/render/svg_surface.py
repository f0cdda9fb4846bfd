"""SVG backend of the drawing surface: writes SVG text directly, no Qt needed.

Text stays ``<text>`` (searchable, selectable, small files) and every node is a
``<g class="node" data-name=... data-op-type=...>`` with a ``<title>``, so a browser's
find and tooltips work on the exported diagram.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from onnxstudio.printable import printable
from onnxstudio.render.drawing import (
    FONT_FALLBACKS,
    Anchor,
    Cubic,
    EdgeDraw,
    Font,
    Point,
    Stroke,
    Surface,
    split_rgba,
)

_K = TypeVar("_K")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# What needs escaping, or (control characters) showing as symbols: see printable.py.
_XML_SPECIAL = re.compile("[&<>\"'\n\r\t\x00-\x1f\x7f-\x9f\ufffe\uffff]")


def _n(v: float) -> str:
    """Compact number: two decimals, no trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


# Numbers formatted in bulk (see SvgSurface.edges): each "%.2f" is followed by _END, so
# its trailing zeros are found by plain replaces, which give what _n gives.
_END = "\x01"
_NUM = "%.2f" + _END
_MOVE, _LINE = f"M{_NUM} {_NUM}", f"L{_NUM} {_NUM}"
_CURVE = f"C{_NUM} {_NUM} {_NUM} {_NUM} {_NUM} {_NUM}"
_ZEROS = [(f".00{_END}", _END)] + [(f".{d}0{_END}", f".{d}{_END}") for d in range(1, 10)] \
    + [(f"-0{_END}", f"0{_END}"), (_END, "")]


def _compact(text: str) -> str:
    """``text`` formatted from _NUMs, each number as _n writes it."""
    for old, new in _ZEROS:
        text = text.replace(old, new)
    return text


# XML's escapes, written out: xml.sax.saxutils imports urllib and with it ssl, whose
# first import held the GIL for 0.2 s and froze the window at its first SVG export.
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                               "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


# Most names need no escape: one regex search decides.
def _escape(text: str) -> str:
    return printable(text).translate(_TEXT_ESCAPES) if _XML_SPECIAL.search(text) else text


def _quoteattr(text: str) -> str:
    """The attribute's value in double quotes, escaped as XML wants."""
    if _XML_SPECIAL.search(text):
        return f'"{printable(text).translate(_ATTR_ESCAPES)}"'
    return f'"{text}"'


def svg_id(item_id: str) -> str:
    """An XML-safe id for ``item_id`` (the raw id is kept in ``data-id``)."""
    return "i-" + _ID_UNSAFE.sub("_", item_id)


class _Memo(dict[_K, str]):
    """A format cache: ``memo[key]`` is ``make(key)``, computed once. Coordinates repeat
    (a column's x, a row's y, the same widths): on BERT-96 two thirds of the 460k numbers
    written are repeats, and a dict hit costs a tenth of formatting one."""

    def __init__(self, make: Callable[[_K], str]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: _K) -> str:
        text = self[key] = self.make(key)
        return text


def _fill_attrs(fill: str | None) -> str:
    if fill is None:
        return ' fill="none"'
    rgb, a = split_rgba(fill)
    return f' fill="{rgb}"' + (f' fill-opacity="{_n(a)}"' if a < 1 else "")


def _stroke_attrs(stroke: Stroke | None) -> str:
    if stroke is None:
        return ""
    rgb, a = split_rgba(stroke.color)
    out = f' stroke="{rgb}" stroke-width="{_n(stroke.width)}"'
    if a < 1:
        out += f' stroke-opacity="{_n(a)}"'
    if stroke.dash:
        out += ' stroke-dasharray="' + " ".join(_n(d * stroke.width) for d in stroke.dash) + '"'
    return out


def _font_attrs(font: Font) -> str:
    attrs = f' font-size="{_n(font.size)}"'
    if font.bold:
        attrs += ' font-weight="bold"'
    if font.italic:
        attrs += ' font-style="italic"'
    if font.mono:
        attrs += ' font-family="DejaVu Sans Mono, monospace"'
    return attrs


class SvgSurface(Surface):
    """Collects SVG elements; :meth:`document` wraps them into a complete file.

    SVG has no painter transform to set, so :meth:`shift` offsets every coordinate as it
    is written (where the diagram sits on an export's sheet).
    """

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._depth = 0
        self._ids: set[str] = set()
        self.dx = self.dy = 0.0
        self._num = _Memo[float](_n)
        self._fill = _Memo[str | None](_fill_attrs)
        self._stroke = _Memo[Stroke | None](_stroke_attrs)
        self._font = _Memo[Font](_font_attrs)

    @property
    def item_ids(self) -> set[str]:
        """The ids of the items written so far (kept unique by suffixes)."""
        return self._ids

    def shift(self, dx: float, dy: float) -> None:
        """Add (dx, dy) to the coordinates of everything drawn from now on."""
        self.dx, self.dy = dx, dy

    # -- Surface ------------------------------------------------------------------------

    def begin_item(self, item_id: str, kind: str, name: str = "", op_type: str = "") -> None:
        if _ID_UNSAFE.search(item_id) is None:  # most ids ("edge12"): nothing to replace
            sid, quoted = "i-" + item_id, f'"{item_id}"'
        else:
            sid, quoted = svg_id(item_id), _quoteattr(item_id)
        ids = self._ids
        if sid in ids:  # ids must stay unique even if sanitising collides
            k = 2
            while f"{sid}-{k}" in ids:
                k += 1
            sid = f"{sid}-{k}"
        ids.add(sid)
        label = name or item_id
        if op_type:
            title = _escape(f"{op_type} {label}" if label else op_type)
            self.parts.append(
                f'<g id="{sid}" class="{kind}" data-id={quoted}'
                f"{f' data-name={_quoteattr(name)}' if name else ''}"
                f" data-op-type={_quoteattr(op_type)}><title>{title}</title>")
        elif name:
            # A plain name (most: tensor and node names) is its own attribute and title.
            if _XML_SPECIAL.search(name) is None:
                self.parts.append(f'<g id="{sid}" class="{kind}" data-id={quoted}'
                                  f' data-name="{name}"><title>{name}</title>')
            else:
                self.parts.append(f'<g id="{sid}" class="{kind}" data-id={quoted}'
                                  f" data-name={_quoteattr(name)}><title>{_escape(name)}</title>")
        else:
            self.parts.append(
                f'<g id="{sid}" class="{kind}" data-id={quoted}><title>{_escape(label)}</title>')
        self._depth += 1

    def end_item(self) -> None:
        if self._depth:
            self._depth -= 1
            self.parts.append("</g>")

    def rect(self, x, y, w, h, fill, stroke) -> None:
        n = self._num
        self.parts.append(
            f'<rect x="{n[x + self.dx]}" y="{n[y + self.dy]}" width="{n[w]}" height="{n[h]}"'
            f"{self._fill[fill]}{self._stroke[stroke]}/>"
        )

    def rounded_rect(self, x, y, w, h, radius, fill, stroke) -> None:
        n = self._num
        self.parts.append(
            f'<rect x="{n[x + self.dx]}" y="{n[y + self.dy]}" width="{n[w]}" height="{n[h]}"'
            f' rx="{n[radius]}"{self._fill[fill]}{self._stroke[stroke]}/>'
        )

    def path(self, start: Point, segments: Sequence[Cubic], stroke: Stroke) -> None:
        n, dx, dy = self._num, self.dx, self.dy
        cx, cy = start[0] + dx, start[1] + dy
        d = [f"M{n[cx]} {n[cy]}"]
        add = d.append
        for (x1, y1), (x2, y2), (ex, ey) in segments:
            x1 += dx
            y1 += dy
            x2 += dx
            y2 += dy
            ex += dx
            ey += dy
            if x1 == cx and y1 == cy and x2 == ex and y2 == ey:
                add(f"L{n[ex]} {n[ey]}")
            else:
                add(f"C{n[x1]} {n[y1]} {n[x2]} {n[y2]} {n[ex]} {n[ey]}")
            cx, cy = ex, ey
        self.parts.append(self._path("".join(d), stroke))

    def _path(self, d: str, stroke: Stroke) -> str:
        """The element of a stroked open path with data ``d``."""
        return (f'<path d="{d}" fill="none"{self._stroke[stroke]}'
                ' stroke-linecap="round" stroke-linejoin="round"/>')

    def edges(self, batch: Sequence[EdgeDraw]) -> None:
        """What the default does, a third faster: every number of the batch's routes and
        arrowheads is formatted by one ``%`` and shifted by numpy, instead of a Python
        addition and format-cache lookup each (BERT-96: 236k numbers)."""
        if not batch:
            return
        form: list[str] = []
        values: list[float] = []
        write, add = form.append, values.extend
        for _, _, start, route, _, arrow, _ in batch:
            cx, cy = start
            write(_MOVE)
            add(start)
            for (x1, y1), (x2, y2), end in route:
                ex, ey = end
                if x1 == cx and y1 == cy and x2 == ex and y2 == ey:
                    write(_LINE)
                    add(end)
                else:
                    write(_CURVE)
                    add((x1, y1, x2, y2, ex, ey))
                cx, cy = ex, ey
            write("\x00" + " ".join([f"{_NUM},{_NUM}"] * len(arrow)) + "\x00")
            for point in arrow:
                add(point)
        if self.dx or self.dy:
            shifted = np.array(values, dtype=np.float64).reshape(-1, 2)
            shifted += np.array([self.dx, self.dy])
            values = shifted.ravel().tolist()
        pieces = _compact("".join(form) % tuple(values)).split("\x00")
        parts, fill_attrs = self.parts, self._fill
        for k, (item_id, name, _, _, stroke, _, fill) in enumerate(batch):
            self.begin_item(item_id, "edge", name, "")
            parts.append(self._path(pieces[2 * k], stroke))
            parts.append(f'<polygon points="{pieces[2 * k + 1]}"{fill_attrs[fill]}/>')
            self.end_item()

    def polygon(self, points: Sequence[Point], fill: str, stroke: Stroke | None = None) -> None:
        n, dx, dy = self._num, self.dx, self.dy
        pts = " ".join([f"{n[x + dx]},{n[y + dy]}" for x, y in points])
        self.parts.append(f'<polygon points="{pts}"{self._fill[fill]}{self._stroke[stroke]}/>')

    def text(
        self, x: float, y: float, text: str, font: Font, color: str, anchor: Anchor = "start"
    ) -> None:
        n = self._num
        where = "" if anchor == "start" else f' text-anchor="{anchor}"'
        self.parts.append(
            f'<text x="{n[x + self.dx]}" y="{n[y + self.dy]}"{self._font[font]}{where}'
            f"{self._fill[color]}>{_escape(text)}</text>"
        )

    # -- document -----------------------------------------------------------------------

    def document(self, x: float, y: float, w: float, h: float, background: str | None) -> str:
        head, tail = self.frame(x, y, w, h, background)
        return head + "\n".join(self.parts) + tail

    @staticmethod
    def frame(x: float, y: float, w: float, h: float, background: str | None
              ) -> tuple[str, str]:
        """What :meth:`document` writes before the parts and after them."""
        family = ", ".join(f"'{f}'" if " " in f else f for f in FONT_FALLBACKS)
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}" height="{_n(h)}" '
            f'viewBox="{_n(x)} {_n(y)} {_n(w)} {_n(h)}" font-family="{family}">\n'
        )
        if background:
            box = f'x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"'
            head += f"<rect {box}{_fill_attrs(background)}/>\n"
        return head, "\n</svg>\n"
