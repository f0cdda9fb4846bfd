"""SVG backend of the drawing surface: writes SVG text directly, no Qt needed.

Text stays ``<text>`` (searchable, selectable, small files) and every node is a
``<g class="node" data-name=... data-op-type=...>`` with a ``<title>``, so a browser's
find and tooltips work on the exported diagram.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
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


# An edge's shape: segment letters and arrowhead size, stroke, fill, its hundredths.
_EdgeShape = tuple[str, Stroke, str, bytes]
_MAX_CENTS = 2.0**62  # hundredths beyond this do not fit the int64 that tells shapes apart


def _edge_numbers(batch: Sequence[EdgeDraw]) -> tuple[list[str], list[float], list[int]]:
    """Per edge: its path's segment letters (L, C) and its arrowhead's point count; all
    the numbers, start, route and arrowhead, as x, y pairs; where each edge's first
    pair is."""
    forms: list[str] = []
    values: list[float] = []
    firsts: list[int] = []
    add = values.extend
    for _, _, start, route, _, arrow, _ in batch:
        firsts.append(len(values) // 2)
        cx, cy = start
        add(start)
        form = ""
        for (x1, y1), (x2, y2), end in route:
            ex, ey = end
            if x1 == cx and y1 == cy and x2 == ex and y2 == ey:
                form += "L"
                add(end)
            else:
                form += "C"
                add((x1, y1, x2, y2, ex, ey))
            cx, cy = ex, ey
        forms.append(f"{form}{len(arrow)}")
        for point in arrow:
            add(point)
    return forms, values, firsts


def _moved(tag: str, x: str, y: str) -> str:
    """An item's ``<g ...>`` tag, translated to (x, y)."""
    return f'<g transform="translate({x} {y})"{tag[2:]}'


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

    keeps_looks = True

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._depth = 0
        self._ids: set[str] = set()
        self.dx = self.dy = 0.0
        self._num = _Memo[float](_n)
        self._fill = _Memo[str | None](_fill_attrs)
        self._stroke = _Memo[Stroke | None](_stroke_attrs)
        self._font = _Memo[Font](_font_attrs)
        self._stamps: dict[Hashable, str] = {}  # key -> its item's elements, at (0, 0)
        self._open = -1  # where in parts the last begun item's tag is

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
        self._open = len(self.parts) - 1
        self._depth += 1

    def end_item(self) -> None:
        if self._depth:
            self._depth -= 1
            self.parts.append("</g>")

    def stamp(self, key: Hashable, origin: Point, draw: Callable[[], None]) -> None:
        """The item's elements drawn at (0, 0) once per key, and its tag given the
        translate to ``origin``: on BERT-96 a hundred layers repeat the same boxes and
        labels, whose elements cost five times the translate's two numbers."""
        parts = self.parts
        tag = len(parts) - 1
        if self._open != tag:  # something was drawn since the tag: not alone
            draw()
            return
        x, y = origin
        n = self._num
        parts[tag] = _moved(parts[tag], n[x + self.dx], n[y + self.dy])
        kept = self._stamps.get(key)
        if kept is None:
            shift = self.dx, self.dy
            self.dx, self.dy = -x, -y
            try:
                draw()
            finally:
                self.dx, self.dy = shift
            kept = self._stamps[key] = "\n".join(parts[tag + 1:])
            del parts[tag + 1:]
        if kept:
            parts.append(kept)

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None, stroke: Stroke | None
             ) -> None:
        n = self._num
        self.parts.append(
            f'<rect x="{n[x + self.dx]}" y="{n[y + self.dy]}" width="{n[w]}" height="{n[h]}"'
            f"{self._fill[fill]}{self._stroke[stroke]}/>"
        )

    def rounded_rect(self, x: float, y: float, w: float, h: float, radius: float, fill: str | None,
                     stroke: Stroke | None) -> None:
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
        """What the default draws, as stamps: each edge's item is translated to its
        start and holds its route and arrowhead relative to it, written once per shape
        (a hundred layers repeat the same edges). numpy rounds every number of the batch
        to the hundredth the file keeps, and the shapes are told apart by those; a point
        lands within a hundredth of where the default writes it. An edge with a number
        that is not finite, or too large, is written by the default."""
        if not batch:
            return
        forms, values, firsts = _edge_numbers(batch)
        cents = np.rint(np.array(values, dtype=np.float64).reshape(-1, 2) * 100.0)
        odd = ~(np.abs(cents) < _MAX_CENTS).all(axis=1)  # nan, inf or too far for int64
        starts = np.array(firsts, dtype=np.int64)
        counts = np.diff(starts, append=len(cents))
        odd_edges = np.logical_or.reduceat(odd, starts).tolist()
        cents[odd] = 0.0
        origins = cents[starts]
        relative = (cents - np.repeat(origins, counts, axis=0)).astype(np.int64)
        origins += np.rint(np.array([self.dx, self.dy]) * 100.0)
        moves = _compact(" ".join([_NUM] * origins.size) % tuple(
            (origins / 100.0).ravel().tolist())).split(" ")
        raw, ends = relative.tobytes(), [*firsts[1:], len(cents)]
        kept = self._stamps
        keys: list[_EdgeShape | None] = []
        new: dict[_EdgeShape, tuple[int, int]] = {}  # shapes not kept yet: their rows
        for k, (_, _, _, _, stroke, _, fill) in enumerate(batch):
            key = None if odd_edges[k] else (forms[k], stroke, fill,
                                             raw[16 * firsts[k]:16 * ends[k]])
            if key is not None and key not in kept and key not in new:
                new[key] = (firsts[k], ends[k])
            keys.append(key)
        if new:
            self._edge_shapes(new, relative)
        parts = self.parts
        for k, edge in enumerate(batch):
            key = keys[k]
            if key is None:
                Surface.edges(self, [edge])
                continue
            item_id, name = edge[0], edge[1]
            self.begin_item(item_id, "edge", name, "")
            parts[-1] = _moved(parts[-1], moves[2 * k], moves[2 * k + 1])
            parts.append(kept[key])
            self.end_item()

    def _edge_shapes(self, new: dict[_EdgeShape, tuple[int, int]], relative: np.ndarray
                     ) -> None:
        """Keep the path and arrowhead of each new shape, formatted in one ``%``."""
        form: list[str] = []
        rows: list[np.ndarray] = []
        for (letters, _, _, _), (first, end) in new.items():
            form.append(_MOVE)
            form.extend([_LINE if letter == "L" else _CURVE for letter in letters[:-1]])
            form.append("\x00" + " ".join([f"{_NUM},{_NUM}"] * int(letters[-1])) + "\x00")
            rows.append(relative[first:end])
        numbers = (np.concatenate(rows) / 100.0).ravel().tolist()
        pieces = _compact("".join(form) % tuple(numbers)).split("\x00")
        for j, key in enumerate(new):
            _, stroke, fill, _ = key
            self._stamps[key] = (f"{self._path(pieces[2 * j], stroke)}\n"
                                 f'<polygon points="{pieces[2 * j + 1]}"{self._fill[fill]}/>')

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
