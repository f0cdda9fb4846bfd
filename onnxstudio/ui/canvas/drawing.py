"""What a tab shows, built off the GUI thread by its open and layout tasks: the layout,
its painter (hit index, label placement, long curves), the heatmap folded into it, and
the views the panels read when a model lands (the minimap renders its image on a worker
of its own)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from PySide6.QtGui import QImage

from onnxstudio.layout import viewport
from onnxstudio.layout.build import build_layout
from onnxstudio.layout.cache import layout_model
from onnxstudio.layout.labels import model_dim_abbreviations
from onnxstudio.layout.relabel import relabelled
from onnxstudio.layout.state import ExpandState
from onnxstudio.layout.types import Direction, Layout
from onnxstudio.model import Graph, Model
from onnxstudio.model.hiding import without_hidden
from onnxstudio.model.open import PendingShapes
from onnxstudio.model.operators import prepare_model_views
from onnxstudio.render.hit_index import Rect
from onnxstudio.render.overlay import Overlay, OverlayData, build_overlay
from onnxstudio.render.qt_surface import Paths, prebuilt_paths
from onnxstudio.render.scene_painter import COARSE_SCALE, Focus, GraphPainter
from onnxstudio.render.theme import Theme
from onnxstudio.runner.choices import model_key
from onnxstudio.ui.canvas.minimap import overview_size, render_overview
from onnxstudio.ui.tasks import TaskContext


@dataclass
class Drawing:
    """A layout and its painter (with the hit index, 0.2 s on 100k boxes), built off-thread."""

    layout: Layout
    painter: GraphPainter
    overlay_data: OverlayData | None = None
    overlay: Overlay | None = None  # overlay_data folded into this layout's boxes
    # boxes by kind, for the status line: counted here, off-thread (100k boxes: 40 ms)
    kinds: Counter[str] = field(default_factory=Counter)
    paths: Paths = field(default_factory=dict)  # the long routes' QPainterPaths, prebuilt
    hidden: int = 0  # nodes View → Hide Nodes left out of this layout


@dataclass
class Opened:
    """What the background open hands back to the GUI thread."""

    model: Model
    shapes: PendingShapes
    state: ExpandState
    drawing: Drawing
    load_seconds: float
    layout_seconds: float


def local_functions(model: Model) -> dict[tuple[str, str], Graph]:
    """Local-function bodies by (domain, name): calls to them expand in place."""
    return {f.key: f.body for f in model.functions}


def prepare_views(model: Model) -> None:
    """What the panels read the moment they show the model (inspector summary, node
    index, dimension legend, the run panel's settings key), computed here off the GUI
    thread: on 100k nodes together they would freeze the window for half a second.
    Computed after the graph is painted (0.3 s sooner on dag100k), which needs only
    the scope tree (``scope_tree``)."""
    prepare_model_views(model)
    model_dim_abbreviations(model)
    if model.path.is_file():
        model_key(model.path)


def draw(model: Model, state: ExpandState, direction: Direction, theme: Theme,
         context: TaskContext, overlay_data: OverlayData | None = None,
         focus: Focus | None = None, hide: frozenset[str] = frozenset(),
         view_size: tuple[int, int] | None = None, fitted: bool = False) -> Drawing:
    """Lay ``model`` out as ``state`` expands it and build what its first paint needs
    (``focus``: what the view will show of it, see ``GraphPainter.prepare_first``; else
    ``view_size``: the view's, which opens it as ``layout.viewport.first_view`` says,
    or whole with ``fitted``; ``hide``: the kinds of node View → Hide Nodes leaves
    out, see model/hiding.py). ``finish`` does the rest once it is shown."""
    shown, hidden = without_hidden(model, hide)

    def progress(fraction: float) -> None:
        context.progress("Laying out", 0.5 + fraction / 2)

    if hidden:  # a filtered graph: never the layout cache's entry for the whole one
        layout = build_layout(shown, state, direction, cancel=context.cancelled,
                              progress=progress)
    else:
        layout = layout_model(model, state, direction, cancel=context.cancelled,
                              progress=progress)
    # LayoutCancelled is a Cancelled: the task stops quietly
    context.check()
    overlay = build_overlay(layout, model.graph, overlay_data) if overlay_data else None
    painter = GraphPainter(layout, theme)
    painter.prepare_first(first_area(painter, focus, view_size, fitted))
    if overlay is not None:
        painter.overlay_fills(overlay)  # what a far paint colours its boxes by
    return Drawing(layout, painter, overlay_data, overlay, Counter(b.kind for b in layout.boxes),
                   prebuilt_paths(painter.prepared_routes()), hidden)


def first_area(painter: GraphPainter, focus: Focus | None,
               view_size: tuple[int, int] | None, fitted: bool = False) -> Rect | None:
    """The area of ``painter``'s layout a view shows first: ``focus``'s, or the one a
    view of ``view_size`` opens on (the whole layout when ``fitted``; nothing to prepare
    when that is so far out that only plain boxes and lines are drawn)."""
    if focus is not None:
        return painter.focus_area(focus)
    if view_size is None or min(view_size) <= 0:
        return None
    w, h = view_size
    if fitted:
        far = viewport.fit_scale(painter.layout, w, h) < COARSE_SCALE
        return None if far else painter.bounds()
    scale, (cx, cy) = viewport.first_view(painter.layout, w, h)
    return (cx - w / scale / 2, cy - h / scale / 2, w / scale, h / scale)


def finish(drawing: Drawing, context: TaskContext) -> tuple[Drawing, Paths]:
    """The rest of ``drawing``'s preparation, once it is shown (the long routes' curves,
    each tensor's home tile; see ``GraphPainter.prepare_rest``), and the QPainterPaths
    of the long routes it smoothed, for the view (built here, off the GUI thread)."""
    painter = drawing.painter
    painter.prepare_rest(context.cancelled)
    context.check()
    known = drawing.paths
    return drawing, prebuilt_paths([route for route in painter.prepared_routes()
                                    if id(route[1]) not in known])


def relabel(drawing: Drawing, model: Model, theme: Theme,
            focus: Focus | None = None) -> Drawing | None:
    """``drawing`` with the edge labels the inferred shapes give, its boxes, heatmap and
    overview kept (see layout/relabel.py), the labels of ``focus`` placed; None when it
    must be laid out again."""
    layout = relabelled(drawing.layout, model.graph)
    if layout is None:
        return None
    painter = GraphPainter.relabelled(drawing.painter, layout, theme)
    painter.prepare_first(painter.focus_area(focus) if focus is not None else None)
    return Drawing(layout, painter, drawing.overlay_data, drawing.overlay, drawing.kinds,
                   drawing.paths, drawing.hidden)


def overview_image(painter: GraphPainter, dpr: float, overlay: Overlay | None) -> QImage:
    """The minimap's image with a heatmap, for the task that folded it to paint."""
    return render_overview(painter, overview_size(painter.layout), dpr, overlay)
