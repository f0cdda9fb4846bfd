"""One open model: loads and lays it out off the GUI thread, then shows it in a GraphView.

The tab owns the model's view state (what is expanded, the direction) and re-lays the
graph out in the background whenever that changes; a newer request supersedes an older
one, so fast clicking never queues stale layouts. The graph is drawn before its shapes
are known: inferred shapes arrive a moment later (``shapesReady``; the steps between
are the landing's, landing.py) and the edges are re-labelled then.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

from onnxstudio.layout.batch import warm_pool
from onnxstudio.layout.cache import scope_tree
from onnxstudio.layout.state import ExpandState, default_state
from onnxstudio.layout.types import Direction, Layout
from onnxstudio.model import Model
from onnxstudio.model.index import node_by_id
from onnxstudio.model.open import PendingShapes, open_model
from onnxstudio.render.overlay import Overlay, OverlayData, build_overlay
from onnxstudio.render.qt_surface import Paths
from onnxstudio.render.theme import theme_named
from onnxstudio.ui.canvas.drawing import (
    Drawing,
    Opened,
    draw,
    finish,
    local_functions,
    relabel,
)
from onnxstudio.ui.canvas.graph_view import GraphView
from onnxstudio.ui.canvas.landing import Landing
from onnxstudio.ui.canvas.tab_pages import ErrorPage, ProgressPage
from onnxstudio.ui.tasks import TaskContext, TaskRunner
from onnxstudio.ui.widgets.release import release_later


class ModelTab(QWidget):
    """A tab holding one model file."""

    loaded = Signal(object)  # Model, once, when the first layout is shown
    shapesReady = Signal(object)  # Model, once its inferred shapes are in (after loaded)
    failed = Signal(str)  # the user-facing reason
    layoutChanged = Signal(object)  # Layout, after every (re)layout
    busyChanged = Signal(bool)
    progress = Signal(str, float)
    closeRequested = Signal()

    def __init__(self, path: str | Path, direction: Direction = "TB", theme: str = "light",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self.direction: Direction = direction
        self.model: Model | None = None
        self.state = ExpandState()
        self.layout_data: Layout | None = None
        self._drawing: Drawing | None = None  # what is shown: layout, painter, overview
        self.error: str | None = None
        self.timings: dict[str, float] = {}
        self._keep_view = True
        self._pending_center: str | None = None
        self.overlay_data: OverlayData | None = None
        # What the run-inspection panels last produced for this model (profile,
        # comparison), so switching tabs shows each model's own results.
        self.run_results: dict[str, Any] = {}
        # The model as edited in memory (unsaved), which runs instead of the file.
        self.model_bytes: bytes | None = None
        self.hidden_kinds: frozenset[str] = frozenset()  # View → Hide Nodes (model/hiding.py)

        self.view = GraphView()
        self.view.set_theme(theme_named(theme))
        self.view.expandRequested.connect(self.toggle)
        self.view.collapseRequested.connect(self.toggle)
        self._progress_page = ProgressPage()
        self._progress_page.title.setText(f"Opening {self.path.name}")
        self._progress_page.cancelClicked.connect(self.cancel)
        self._error_page = ErrorPage()
        self._error_page.closeClicked.connect(self.closeRequested)
        self._stack = QStackedWidget()
        for page in (self._progress_page, self.view, self._error_page):
            self._stack.addWidget(page)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self._stack)

        # the opened model's first paint, its panels' views and shape inference
        self._landing = Landing(self, self.view, self._show_first)
        self._landing.landed.connect(self.loaded)
        self._landing.shaped.connect(self._on_shapes)
        self._landing.failed.connect(self._on_failed)
        self._landing.progress.connect(self.progress)
        self._landing.busyChanged.connect(self._on_busy)
        self._opener = self._runner(self._landing.arrive, self._on_failed, self._on_progress)
        self._layouter = self._runner(self._on_laid_out, self._on_failed, self.progress.emit)
        # the rest of a shown drawing's preparation (long curves, labels' tiles): the
        # expanded dag100k is drawn seconds sooner than with it all
        self._finisher = self._runner(self._on_finished)
        self._pool_asked = False  # the layout's worker pool (``_on_busy``)
        self.view.near_labels.defer_while = lambda: self.busy

    def _runner(self, finished: Callable[[Any], None],
                failed: Callable[[str], None] | None = None,
                progress: Callable[[str, float], None] | None = None) -> TaskRunner:
        runner = TaskRunner(self)
        runner.finished.connect(finished)
        runner.busyChanged.connect(self._on_busy)
        if failed is not None:
            runner.failed.connect(failed)
        if progress is not None:
            runner.progress.connect(progress)
        return runner

    # -- opening --------------------------------------------------------------------
    def start(self, model: Model | None = None) -> None:
        """Open the file in the background; ``model``: show this one, already loaded
        (a diff's side, or its merged graph), laying it out in the background only."""
        self._stack.setCurrentWidget(self._progress_page)
        path, direction, theme = self.path, self.direction, self.view.theme()
        started = time.perf_counter()
        given, hide, data = model, self.hidden_kinds, self.overlay_data
        size, fitted = self._view_size(), self.view.open_fitted

        def work(context: TaskContext) -> Opened:
            if given is not None:  # nothing left to infer: the caller's model is final
                model, shapes = given, PendingShapes(None, None)
            else:
                model, shapes = open_model(
                    path, progress=lambda stage, f: context.progress(stage, f / 2))
            try:
                context.check()
                loaded = time.perf_counter()
                scope_tree(model)  # from the layout cache when it can
                state = default_state(model.graph)
                # with the overlay set before (a diff's colours) folded in here, not
                # on the GUI thread when the drawing lands
                drawing = draw(model, state, direction, theme, context, data, hide=hide,
                               view_size=size, fitted=fitted)
                # what the status line shows with the graph (a pass over 100k nodes)
                model.memo("node_count_total", model.graph.node_count_total)
            except BaseException:
                shapes.cancel()
                raise
            return Opened(model, shapes, state, drawing, loaded - started,
                          time.perf_counter() - loaded)

        self._opener.start(work, quiet_gc=True)

    def hidden_count(self) -> int:
        """Nodes View → Hide Nodes leaves out of the drawing shown."""
        return self._drawing.hidden if self._drawing is not None else 0

    def set_hidden_kinds(self, kinds: frozenset[str]) -> None:
        """Lay out again without the nodes of ``kinds`` (off the GUI thread)."""
        if kinds != self.hidden_kinds:
            self.hidden_kinds = kinds
            self.relayout(keep_view=True)

    def shown_kinds(self) -> Counter[str]:
        """The boxes drawn, by kind ("node", "group", ...), counted off-thread."""
        return self._drawing.kinds if self._drawing is not None else Counter()

    @property
    def busy(self) -> bool:
        """Opening, laying out, or still inferring shapes."""
        return (self._landing.busy or self._opener.busy or self._layouter.busy
                or self._finisher.busy)

    def _on_busy(self, _busy: bool) -> None:
        busy = self.busy
        self.busyChanged.emit(busy)
        if not busy and self.model is not None and not self._pool_asked:
            # the worker processes an Expand All of a big model lays out in, started on
            # a thread once the tab is idle: started as it opened, their imports took
            # the cores from its first paints (dag100k's open stall 25 -> 44-51 ms)
            self._pool_asked = True
            nodes = self.model.memo("node_count_total", self.model.graph.node_count_total)
            threading.Thread(target=warm_pool, args=(nodes,), daemon=True).start()

    def cancel(self) -> None:
        """Stop opening (closes nothing: the tab shows why it is empty) or a relayout."""
        if self._opener.busy:
            self._opener.cancel()
            self._show_error(f"{self.path.name}: opening was cancelled")
        self._layouter.cancel()

    def _on_progress(self, stage: str, fraction: float) -> None:
        self._progress_page.stage.setText(stage)
        self._progress_page.bar.setValue(int(fraction * 100))
        self.progress.emit(stage, fraction)

    def _show_first(self, opened: Opened) -> None:
        """The landing's first paint (landing.py)."""
        self.model, self.state = opened.model, opened.state
        self.timings = {"load": opened.load_seconds, "layout": opened.layout_seconds}
        # Show the view first: its initial zoom (fit, or readable at the top) needs the
        # viewport's real size, which a hidden page of the stack does not have yet.
        self._stack.setCurrentWidget(self.view)
        self._show(opened.drawing, keep_view=False, finish_later=False)  # relabelled soon

    def _on_shapes(self, changed: int) -> None:
        """The edges' shape labels: swapped into the drawing shown when nothing else is
        being laid out and nothing can move (a fraction of a new layout's time); with
        no value changed (a diff's sides come with their shapes), the drawing shown is
        finished instead of relabelled and painted again."""
        drawing, model = self._drawing, self.model
        if drawing is None or model is None or self._layouter.busy:
            self.relayout()
        elif not changed:
            self._finisher.start(lambda context: finish(drawing, context), quiet_gc=True)
        else:
            state, direction, theme = self.state.copy(), self.direction, self.view.theme()
            data, hide = self.overlay_data, self.hidden_kinds
            focus = self.view.anchored_area()
            self._keep_view = True
            self._finisher.cancel()
            self._layouter.start(
                lambda context: relabel(drawing, model, theme, focus)
                or draw(model, state, direction, theme, context, data, focus, hide),
                quiet_gc=True)
        self.shapesReady.emit(self.model)

    def shutdown(self) -> None:
        """Stop all background work before the tab goes (a shape-inference child too)."""
        self.cancel()
        self._finisher.cancel()
        self._landing.shutdown()

    def release(self) -> None:
        """Let go of the model and its drawing (a closed tab, after ``shutdown``): the
        tab's Python side outlives the deleted widget until a full collection, and must
        not keep a closed model's graph alive with it (issue 32)."""
        self.view.set_layout(None)
        self.model = self.layout_data = self._drawing = self.overlay_data = None
        self.model_bytes = None
        self.run_results = {}

    def _on_failed(self, message: str) -> None:
        if self.model is None:
            self._show_error(message)
        self.failed.emit(message)

    def _show_error(self, message: str) -> None:
        self.error = message
        self._error_page.set_message(message)
        self._stack.setCurrentWidget(self._error_page)

    def replace_model(self, model: Model, model_bytes: bytes | None) -> None:
        """Show an edited version of the model: same expand state, the view kept in place
        (boxes that survive the edit anchor it). Its shapes are inferred already."""
        self._landing.drop_shapes()
        self.model, self.model_bytes = model, model_bytes
        release_later(*self.run_results.values())  # measured on the model as it was
        self.run_results.clear()
        self.overlay_data = None
        self.relayout(keep_view=True)

    # -- view state -----------------------------------------------------------------
    def relayout(self, keep_view: bool = True) -> None:
        if self.model is None:
            return
        model, state, direction = self.model, self.state.copy(), self.direction
        theme, data, hide = self.view.theme(), self.overlay_data, self.hidden_kinds
        focus = self.view.anchored_area() if keep_view else None
        size = self._view_size()
        self._keep_view = keep_view
        self._finisher.cancel()  # for a drawing about to go
        self._layouter.start(
            lambda context: draw(model, state, direction, theme, context, data, focus, hide,
                                 size),
            quiet_gc=True)

    def _view_size(self) -> tuple[int, int]:
        """The view's size for a layout task (the tab's while the view is not shown)."""
        size = self.view.viewport().size() if self.view.isVisible() else self.size()
        return size.width(), size.height()

    def _on_laid_out(self, drawing: Drawing) -> None:
        self._show(drawing, keep_view=self._keep_view)

    def _show(self, drawing: Drawing, keep_view: bool, finish_later: bool = True) -> None:
        """Show ``drawing`` (its first view prepared), then, unless ``finish_later`` is
        False, prepare the rest of it in a task (``finish``)."""
        self._drawing = drawing
        self.layout_data = drawing.layout
        self.view.set_layout(drawing.layout, keep_view=keep_view, painter=drawing.painter,
                             paths=drawing.paths)
        if drawing.overlay_data is self.overlay_data:
            self.view.set_overlay(drawing.overlay)
        else:  # the overlay changed while this layout was being built
            self.set_overlay(self.overlay_data)
        self._center_pending(drawing.layout)
        self.layoutChanged.emit(drawing.layout)
        if finish_later:
            self._finisher.start(lambda context: finish(drawing, context), quiet_gc=True)

    def _on_finished(self, finished: tuple[Drawing, Paths]) -> None:
        """The long routes' paths the finisher built, for the view's next paints."""
        drawing, paths = finished
        self.view.add_paths(drawing.painter, paths)  # unless another is shown by now

    def set_overlay(self, data: OverlayData | None, overlay: Overlay | None = None,
                    overview: QImage | None = None) -> None:
        """Colour the graph by a run's measurements (None: plain again); ``overlay`` is
        ``data`` already folded into the current layout, ``overview`` the minimap's image
        with it (``overview_image``), both done off-thread by the caller."""
        self.overlay_data = data
        if data is None or self.model is None or self.layout_data is None:
            self.view.set_overlay(None)
            return
        self.view.set_overlay(overlay or build_overlay(self.layout_data, self.model.graph, data))
        graph = self.view.painter()
        if overview is not None and overlay is not None and graph is not None:
            self.view.minimap.offer(overview, graph, overlay)

    def toggle(self, box_id: str) -> None:
        """Expand or collapse a scope group, or a node's body shown in place."""
        node = node_by_id(self.model, box_id) if self.model is not None else None
        if node is not None and (node.subgraphs or node.function):
            self.state.nodes.symmetric_difference_update({box_id})
        else:
            self.state.toggle(box_id)
        self.relayout()

    def expand_all(self) -> None:
        if self.model is not None:
            self.state.expand_all(self.model.graph, bodies=True,
                                  functions=local_functions(self.model))
            self.relayout()

    def collapse_all(self) -> None:
        self.state.collapse_all()
        self.relayout()

    def set_direction(self, direction: Direction) -> None:
        if direction != self.direction:
            self.direction = direction
            self.relayout(keep_view=False)

    def set_theme(self, theme: str) -> None:
        self.view.set_theme(theme_named(theme))

    def reveal(self, node_id: str) -> None:
        """Centre ``node_id``, expanding the groups and bodies that hide it first."""
        if self.model is None:
            return
        if self.layout_data is not None and self.layout_data.box(node_id) is not None:
            self.view.centerOn(node_id)
            return
        self.state.reveal(self.model.graph, node_id, local_functions(self.model))
        self._pending_center = node_id
        self.relayout()

    def _center_pending(self, layout: Layout) -> None:
        node_id = self._pending_center
        if node_id and layout.box(node_id) is not None:
            self._pending_center = None
            self.view.centerOn(node_id)

