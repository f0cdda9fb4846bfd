"""The drawing surface: the few primitives the graph painter needs, backend-neutral.

:class:`~onnxstudio.render.scene_painter.GraphPainter` draws onto a :class:`Surface`;
the screen and PNG/PDF use the QPainter backend (``qt_surface``), SVG its own Qt-free
writer (``svg_surface``). Because both receive the very same calls, an export looks
exactly like the canvas.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from typing import Literal, NamedTuple

import numpy as np

Point = tuple[float, float]
Cubic = tuple[Point, Point, Point]  # control 1, control 2, end point
Anchor = Literal["start", "middle", "end"]

FONT_FAMILY = "DejaVu Sans"
FONT_FALLBACKS = ("DejaVu Sans", "Segoe UI", "Helvetica Neue", "Arial", "sans-serif")


# Stroke and Font are named tuples, not frozen dataclasses: backends look them up in
# caches for every shape, and a tuple hashes and compares in C (a dataclass' generated
# __hash__ is Python code: 1.3 µs per box border made and looked up, instead of 0.6).
class Stroke(NamedTuple):
    """An outline: colour, width in drawing units, optional dash pattern (in widths)."""

    color: str
    width: float = 1.0
    dash: tuple[float, ...] | None = None


class Font(NamedTuple):
    """A font request; immutable so backends can cache the native font per instance."""

    size: float
    bold: bool = False
    italic: bool = False
    mono: bool = False


# One edge as :meth:`Surface.edges` draws it: item id, value name, start, route, its
# stroke, arrowhead, arrowhead fill.
EdgeDraw = tuple[str, str, Point, Sequence[Cubic], Stroke, Sequence[Point], str]


class Surface(ABC):
    """Where a graph is drawn. Coordinates are layout units; y grows downwards."""

    keeps_looks = False  # whether :meth:`stamp` reuses drawings: only then are keys made

    def begin_item(  # noqa: B027 - optional hook, most backends ignore items
        self, item_id: str, kind: str, name: str = "", op_type: str = ""
    ) -> None:
        """Open a logical item (node, edge, group); SVG turns it into a ``<g>``."""

    def end_item(self) -> None:  # noqa: B027
        """Close the item opened by the matching :meth:`begin_item`."""

    @abstractmethod
    def rect(
        self, x: float, y: float, w: float, h: float, fill: str | None, stroke: Stroke | None
    ) -> None: ...

    @abstractmethod
    def rounded_rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        radius: float,
        fill: str | None,
        stroke: Stroke | None,
    ) -> None: ...

    @abstractmethod
    def path(self, start: Point, segments: Sequence[Cubic], stroke: Stroke) -> None:
        """An open stroked curve made of cubic Bézier segments."""

    @abstractmethod
    def polygon(self, points: Sequence[Point], fill: str, stroke: Stroke | None = None) -> None: ...

    @abstractmethod
    def text(
        self, x: float, y: float, text: str, font: Font, color: str, anchor: Anchor = "start"
    ) -> None:
        """Draw ``text`` with its baseline at ``y``; ``anchor`` says where ``x`` is."""

    def stamp(self, key: Hashable, origin: Point, draw: Callable[[], None]) -> None:
        """Draw the item just begun: ``draw()`` draws it where it stands, and its look is
        the same for every item of this ``key`` but for that place (``origin``, its
        top-left). The default draws; a backend that ``keeps_looks`` draws each key once
        and repeats the drawing, moved (SVG: under the item's translate). Painters call
        it only for such a backend: the screen's paint makes no keys."""
        draw()

    def rects(
        self,
        boxes: Sequence[tuple[float, float, float, float]] | np.ndarray,
        fill: str | None,
        stroke: Stroke | None,
    ) -> None:
        """Many plain rectangles in one style, rows of x, y, width, height (an array at
        coarse zoom); backends may batch this."""
        for x, y, w, h in boxes:
            self.rect(x, y, w, h, fill, stroke)

    def edges(self, batch: Sequence[EdgeDraw]) -> None:
        """Edges, each an item of its route and arrowhead; backends may batch this (SVG
        formats all their numbers at once)."""
        for item_id, name, start, route, stroke, arrow, fill in batch:
            self.begin_item(item_id, "edge", name, "")
            self.path(start, route, stroke)
            self.polygon(arrow, fill)
            self.end_item()

    def lines(self, segments: np.ndarray, stroke: Stroke) -> None:
        """Many straight segments in one style, rows of x0, y0, x1, y1 (edges at coarse
        zoom); backends may draw the array as it is."""
        for x0, y0, x1, y1 in segments.tolist():
            self.path((x0, y0), [((x0, y0), (x1, y1), (x1, y1))], stroke)


def split_rgba(color: str) -> tuple[str, float]:
    """``"#rrggbbaa"`` -> (``"#rrggbb"``, alpha 0..1); ``"#rrggbb"`` has alpha 1."""
    if len(color) == 9 and color.startswith("#"):
        return color[:7], int(color[7:9], 16) / 255.0
    return color, 1.0
