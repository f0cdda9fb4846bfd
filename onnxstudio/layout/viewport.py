"""Where a view opens and how far Fit may zoom out: readable first, overview second.

Qt-free so it can be tested on plain layouts. A graph that fits the window with op
titles of at least ``READABLE_TITLE_PX`` screen pixels opens whole; a larger one opens
at that size, centred on its inputs (where a reader starts), to be scrolled from
there. Fit shows the whole drawing, however small (its titles vanish below
``FIT_MIN_TITLE_PX``, the boxes and their colours remain): stopping at a minimum zoom
showed a third of a 66-node model and looked like a Fit that had failed.
"""

from __future__ import annotations

from onnxstudio.layout.sizing import TITLE_FONT_PX
from onnxstudio.layout.types import Layout, Point

READABLE_TITLE_PX = 9.0
FIT_MIN_TITLE_PX = 5.5  # zooming out by hand stops here (or below a smaller Fit)
MAX_OPEN_SCALE = 1.25  # a tiny graph is not blown up beyond this
MARGIN = 24.0

READABLE_SCALE = READABLE_TITLE_PX / TITLE_FONT_PX
FIT_MIN_SCALE = FIT_MIN_TITLE_PX / TITLE_FONT_PX


def whole_scale(layout: Layout, view_w: float, view_h: float) -> float:
    """The scale at which the whole drawing (plus margins) fills the view."""
    w = max(layout.width + 2 * MARGIN, 1.0)
    h = max(layout.height + 2 * MARGIN, 1.0)
    return min(view_w / w, view_h / h)


def fit_scale(layout: Layout, view_w: float, view_h: float) -> float:
    """Fit's zoom: the whole drawing, a small one not blown up past ``MAX_OPEN_SCALE``."""
    return min(MAX_OPEN_SCALE, whole_scale(layout, view_w, view_h))


def _clamp(centre: float, half_view: float, size: float) -> float:
    """Keep the view inside the drawing along one axis (centred when it is smaller)."""
    if 2 * half_view >= size + 2 * MARGIN:
        return size / 2
    return min(max(centre, half_view - MARGIN), size + MARGIN - half_view)


def first_view(layout: Layout, view_w: float, view_h: float) -> tuple[float, Point]:
    """(scale, scene centre) for a freshly opened graph in a ``view_w``×``view_h`` view."""
    whole = whole_scale(layout, view_w, view_h)
    scale = min(whole, MAX_OPEN_SCALE) if whole >= READABLE_SCALE else READABLE_SCALE
    return scale, view_centre(layout, view_w, view_h, scale)


def view_centre(layout: Layout, view_w: float, view_h: float, scale: float) -> Point:
    """Where to centre a view at ``scale``: the middle when the drawing fits, otherwise
    the start of the flow (the inputs), scrolled no further than the drawing's edges."""
    half_w, half_h = view_w / scale / 2, view_h / scale / 2
    middle = (layout.width / 2, layout.height / 2)
    if 2 * half_w >= layout.width + 2 * MARGIN and 2 * half_h >= layout.height + 2 * MARGIN:
        return middle
    inputs = [b for b in layout.boxes if b.kind == "input"] or layout.boxes
    if not inputs:
        return middle
    if layout.direction == "LR":  # inputs on the left: start there, centred on them
        cy = sum(b.center[1] for b in inputs) / len(inputs)
        cx = min(b.x for b in inputs) - MARGIN + half_w
    else:
        cx = sum(b.center[0] for b in inputs) / len(inputs)
        cy = min(b.y for b in inputs) - MARGIN + half_h
    return _clamp(cx, half_w, layout.width), _clamp(cy, half_h, layout.height)
