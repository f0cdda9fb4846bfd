"""A model tab's landing: from its graph drawn off the GUI thread to a tab at rest.

The graph paints first (one tab's first paint a turn); two turns later a worker builds
what the panels show, they fill, and two turns after that shape inference starts. Each
step waits for the layout and paint the one before posted: in one turn, with the
inference thread's Python taking the GIL from each Qt call, they froze the window for
~90 ms (BERT-96's panels: 100-190 ms).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject, Signal

from onnxstudio.layout.labels import model_dim_abbreviations
from onnxstudio.model.open import PendingShapes
from onnxstudio.ui.canvas.drawing import Opened, prepare_views
from onnxstudio.ui.canvas.graph_view import GraphView
from onnxstudio.ui.tasks import TaskContext, TaskRunner, next_turn


class Landing(QObject):
    """Owned by a ModelTab: ``arrive(opened)`` when its open task is done; ``show``
    puts the drawing on screen (the tab's model, state and page)."""

    landed = Signal(object)  # Model: the panels' views are built, they may fill
    shaped = Signal(int)  # shape inference is in: how many values it changed
    failed = Signal(str)
    progress = Signal(str, float)
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject, view: GraphView,
                 show: Callable[[Opened], None]) -> None:
        super().__init__(parent)
        self._view, self._show = view, show
        self._viewer = self._runner()  # the panels' views
        self._viewer.finished.connect(self._land)
        self._viewer.failed.connect(self._on_views_failed)
        self._shaper = self._runner()
        self._shaper.finished.connect(self._on_shapes)
        self._shaper.failed.connect(self.failed)
        self._shaper.progress.connect(self.progress)
        self.pending_shapes: PendingShapes | None = None
        self._waiting: Opened | None = None  # drawn, landing next turn (take_first_paint)
        self._active = False  # shown, the panels and shape inference a turn away
        # The minimap's render and the far view's, which the first paint asks for,
        # wait until the landing is done.
        view.minimap.defer_while = view.far.defer_while = lambda: self._active

    def _runner(self) -> TaskRunner:
        runner = TaskRunner(self)
        runner.busyChanged.connect(self.busyChanged)
        return runner

    @property
    def busy(self) -> bool:
        return (self._active or self._waiting is not None or self._viewer.busy
                or self._shaper.busy)

    def arrive(self, opened: Opened) -> None:
        """Paint ``opened`` now (unless another tab's first paint is this turn's)."""
        if not take_first_paint():
            self._waiting = opened
            self.busyChanged.emit(True)
            next_turn(self, self._land_waiting)
            return
        self._show(opened)  # relabelled once its shapes are in
        self.pending_shapes = opened.shapes
        self._active = True
        self.busyChanged.emit(True)
        next_turn(self, lambda: self._viewer.start(
            lambda _context: self._views(opened), quiet_gc=True), turns=2)
        self._view.viewport().repaint()

    def _land_waiting(self) -> None:
        opened, self._waiting = self._waiting, None
        if opened is not None:  # not shut down meanwhile
            self.arrive(opened)

    @staticmethod
    def _views(opened: Opened) -> Opened:
        prepare_views(opened.model)
        opened.drawing.painter.index.adjacency()  # what a hover asks, as a finisher does
        return opened

    def _land(self, opened: Opened) -> None:
        """The panels fill; shape inference starts two turns later, once their layout and
        paint are done."""
        if self.pending_shapes is not opened.shapes:
            self._active = False  # shut down meanwhile
            self.busyChanged.emit(False)
            return
        self.landed.emit(opened.model)
        next_turn(self, lambda: self._infer_shapes(opened), turns=2)

    def _infer_shapes(self, opened: Opened) -> None:
        self._active = False
        shapes = opened.shapes
        if self.pending_shapes is not shapes:
            self.busyChanged.emit(False)  # shut down meanwhile
            return

        def infer(context: TaskContext) -> int:
            context.progress("Inferring shapes", 0.5)
            changed = shapes.apply(opened.model)
            model_dim_abbreviations(opened.model)  # the inspector's refresh needs them
            return changed

        self._shaper.start(infer)

    def _on_shapes(self, changed: int) -> None:
        self.pending_shapes = None
        self.shaped.emit(changed)

    def _on_views_failed(self, message: str) -> None:
        """A bug in the panels' views: the graph stays shown and the tab stops being busy."""
        self._active = False
        self.busyChanged.emit(False)
        self.failed.emit(message)

    def drop_shapes(self) -> None:
        """Shape inference will not be wanted (the tab closes, or shows an edited model)."""
        self._shaper.cancel()
        if self.pending_shapes is not None:
            self.pending_shapes.cancel()
            self.pending_shapes = None

    def shutdown(self) -> None:
        """Stop what is left of the landing (a shape-inference child too)."""
        self.drop_shapes()
        if self._waiting is not None:  # drawn, its first paint a turn away: dropped
            self._waiting.shapes.cancel()
            self._waiting = None
            self.busyChanged.emit(False)
        if self._active:  # what was left of the landing does nothing now
            self._active = False
            self.busyChanged.emit(False)


_first_paint_taken = False


def take_first_paint() -> bool:
    """Whether a tab's first paint may happen in this turn of the event loop: one per
    turn. Two tabs landing together (a diff's sides) painted both in one turn: 75 ms of
    GUI thread on BERT-96's optimised graph, where each alone takes half."""
    global _first_paint_taken
    app = QCoreApplication.instance()
    if app is None:
        return True
    if _first_paint_taken:
        return False
    _first_paint_taken = True
    next_turn(app, _release_first_paint)
    return True


def _release_first_paint() -> None:
    global _first_paint_taken
    _first_paint_taken = False
