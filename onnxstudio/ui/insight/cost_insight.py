"""What the model costs and where it runs: the glue between the Cost and Placement docks,
their worker tasks and the current tab's canvas.

The cost table and the provider placement are computed as tasks (`TaskRunner`: newest
wins); their answers are kept with the tab (`ModelTab.run_results`, dropped when the
model is edited) and painted through the same overlay the profile heatmap uses, folded
on the worker into the layout shown when the task started.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from onnxstudio.errors import OnnxStudioError
from onnxstudio.layout.cost_table import cost_of_file
from onnxstudio.layout.types import Layout
from onnxstudio.model.cost import ModelCost
from onnxstudio.render.overlay import (
    Overlay,
    OverlayData,
    build_overlay,
    cost_overlay,
    placement_overlay,
)
from onnxstudio.runner.placement import Placement, discover_providers, placement, provider_times
from onnxstudio.runner.synthetic import parse_dim_sizes
from onnxstudio.ui.canvas.drawing import overview_image
from onnxstudio.ui.insight.cost_panel import NO_COLOUR, CostPanel
from onnxstudio.ui.insight.placement_panel import PlacementPanel
from onnxstudio.ui.tasks import TaskContext, TaskRunner, next_turn

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.canvas.model_tab import ModelTab

COST = "cost"  # keys of ModelTab.run_results, named as the overlay each result paints
PLACEMENT = "placement"
PROFILE = "profile"  # RunInsight's profile, read for the time per provider


@dataclass
class Folded:
    """An overlay folded into the layout shown when its task started."""

    data: OverlayData | None
    layout: Layout | None
    overlay: Overlay | None
    overview: QImage | None


def fold_for(tab: ModelTab) -> Callable[[OverlayData | None], Folded]:
    """What a task needs to fold an overlay into ``tab``'s current layout, captured now
    on the GUI thread; the returned function runs on the worker."""
    layout, painter, dpr = tab.layout_data, tab.view.painter(), tab.devicePixelRatioF()
    assert tab.model is not None
    graph = tab.model.graph

    def fold(data: OverlayData | None) -> Folded:
        if data is None or layout is None:
            return Folded(data, None, None, None)
        overlay = build_overlay(layout, graph, data)
        fits = painter is not None and painter.layout is layout
        return Folded(data, layout, overlay,
                      overview_image(painter, dpr, overlay) if fits and painter else None)
    return fold


def paint(tab: ModelTab, folded: Folded) -> None:
    """Show a folded overlay (folded again if the layout changed meanwhile)."""
    if folded.data is None:
        return
    if folded.layout is not None and folded.layout is tab.layout_data:
        tab.set_overlay(folded.data, folded.overlay, folded.overview)
    else:
        tab.set_overlay(folded.data)


class CostInsight(QObject):
    """Owns the Cost panel and its task; the window forwards tab changes to it."""

    statusMessage = Signal(str)
    showPanel = Signal(str)

    def __init__(self, current_tab: Callable[[], ModelTab | None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tab = current_tab
        self.cost_panel = CostPanel()
        self._coster = TaskRunner(self)
        self._costing: tuple[ModelTab, Model] | None = None  # the tab and model counted
        self._painter = TaskRunner(self)
        self._coster.finished.connect(self._on_costed)
        self._coster.failed.connect(self._failed)
        self._coster.busyChanged.connect(
            lambda busy: None if busy else self.cost_panel.set_busy(False))
        self._painter.finished.connect(self._on_folded)
        self.cost_panel.cancelRequested.connect(self._coster.cancel)
        self.cost_panel.costRequested.connect(self.start_cost)
        self.cost_panel.colourChosen.connect(self.colour_by)
        self.cost_panel.nodeActivated.connect(self._reveal)
        self.cost_panel.scopeActivated.connect(self._reveal_scope)

        self.placement_panel = PlacementPanel()
        self.placement_panel.set_providers(discover_providers())
        self._placer = TaskRunner(self)
        self._placer.finished.connect(self._on_placed)
        self._placer.failed.connect(self._placement_failed)
        self._placer.busyChanged.connect(
            lambda busy: None if busy else self.placement_panel.set_busy(False))
        self.placement_panel.cancelRequested.connect(self._placer.cancel)
        self.placement_panel.placementRequested.connect(self.start_placement)
        self.placement_panel.colourToggled.connect(self._colour_placement)
        self.placement_panel.nodeActivated.connect(self._reveal)

    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        """A tab became current or finished loading: its own cost, or compute it when
        the panel is on screen. A count still running for a tab since closed, or for a
        model since replaced, is cancelled (its inference child killed)."""
        costing = self._costing
        if costing is not None and self._coster.busy and costing[0].model is not costing[1]:
            self._coster.cancel()
        path = tab.path if tab is not None and model is not None else None
        self.cost_panel.set_model(path)
        self.placement_panel.set_model(path)
        if tab is None or model is None:
            return
        found = tab.run_results.get(PLACEMENT)
        if found is not None:
            self.placement_panel.set_result(found, self._timed(tab, found))
        cost = tab.run_results.get(COST)
        if cost is not None:
            self.cost_panel.set_result(cost)
        elif self.cost_panel.isVisible():
            self._cost_when_idle(tab)

    def _cost_when_idle(self, tab: ModelTab) -> None:
        """Count ``tab``'s costs once it is laid out and shaped: a table landing while a
        layout's worker runs Python waits for the GIL at every cell Qt measures and
        paints (BERT-96's edit: gaps of 0.4-0.9 s made of the node table's calls)."""
        if tab is not self._tab() or tab.model is None or COST in tab.run_results:
            return  # another tab is shown, or counted meanwhile
        if tab.busy:
            next_turn(self, lambda: self._cost_when_idle(tab))
        else:
            self.start_cost()

    def show_cost(self) -> None:
        """Model → Cost Table: the dock, filled."""
        self.showPanel.emit("cost")
        tab = self._tab()
        if tab is not None and tab.run_results.get(COST) is None:
            self.start_cost()

    def start_cost(self, dims_text: str | None = None) -> None:
        tab = self._tab()
        if tab is None or tab.model is None:
            return
        try:
            dims = parse_dim_sizes(self.cost_panel.dims_text() if dims_text is None
                                   else dims_text)
        except OnnxStudioError as exc:
            self.cost_panel.show_error(str(exc))
            return
        metric = self.cost_panel.chosen_cost()
        model, path, data = tab.model, tab.path, tab.model_bytes
        fold = fold_for(tab)
        self.cost_panel.set_busy(True, f"Counting the costs of {path.name}…")

        def work(context: TaskContext) -> tuple[ModelTab, ModelCost, Folded]:
            context.progress("Counting", 0.0)
            cost = cost_of_file(path, model, data, dims, kill_on=context.token.watch)
            cost.ranked()  # the node table's order, sorted here rather than in the window
            context.check()
            return tab, cost, fold(cost_overlay(cost, metric) if metric != NO_COLOUR
                                   else None)

        self._costing = (tab, model)
        self._coster.start(work, quiet_gc=True)

    def _on_costed(self, answer: tuple[ModelTab, ModelCost, Folded]) -> None:
        tab, cost, folded = answer
        tab.run_results[COST] = cost
        if tab is not self._tab():
            return
        self.cost_panel.set_result(cost)
        paint(tab, folded)
        self.statusMessage.emit(f"{tab.path.name}: {cost.macs:,} MACs, "
                                f"{cost.params:,} parameters")

    def _failed(self, message: str) -> None:
        self.cost_panel.set_busy(False)
        self.cost_panel.show_error(message)

    def colour_by(self, metric: str) -> None:
        """Colour the canvas by one cost (computing the table first if needed)."""
        tab = self._tab()
        if tab is None or tab.model is None:
            return
        cost = tab.run_results.get(COST)
        if metric == NO_COLOUR:
            if tab.overlay_data is not None and tab.overlay_data.kind == COST:
                tab.set_overlay(None)
            return
        if cost is None:
            self.start_cost()
            return
        fold = fold_for(tab)
        self._painter.start(lambda _context: (tab, fold(cost_overlay(cost, metric))))

    def _on_folded(self, answer: tuple[ModelTab, Folded]) -> None:
        tab, folded = answer
        if tab is self._tab():
            paint(tab, folded)

    def overlay_cleared(self) -> None:
        """The legend's ✕ (or Clear Heatmap) took the colours off: the combo follows."""
        tab = self._tab()
        kind = tab.overlay_data.kind if tab is not None and tab.overlay_data else None
        if kind != COST:
            combo = self.cost_panel.colour_combo
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        if kind != PLACEMENT:
            check = self.placement_panel.colour_check
            check.blockSignals(True)
            check.setChecked(False)
            check.blockSignals(False)

    def _reveal(self, key: str) -> None:
        tab = self._tab()
        if tab is not None and tab.model is not None:
            tab.reveal(key)
            tab.view.set_selection([key])

    def _reveal_scope(self, scope: str) -> None:
        """A scope's row: its first node, its groups expanded."""
        tab = self._tab()
        if tab is None or tab.model is None:
            return
        first = next((n.id for n in tab.model.graph.nodes
                      if n.name.startswith(scope + "/")), None)
        if first is not None:
            self._reveal(first)

    # -- where it runs ---------------------------------------------------------------
    def show_placement(self) -> None:
        """Model → Where It Runs: the dock, filled for the chosen provider."""
        self.showPanel.emit(PLACEMENT)
        tab = self._tab()
        if tab is not None and tab.run_results.get(PLACEMENT) is None:
            panel = self.placement_panel
            self.start_placement(str(panel.provider_combo.currentData()),
                                 panel.optimization_combo.currentText())

    def start_placement(self, provider: str, optimization: str) -> None:
        """A session for the tab's model (its edited bytes too) on a worker."""
        tab = self._tab()
        if tab is None or tab.model is None:
            return
        path, data, fold = tab.path, tab.model_bytes, fold_for(tab)
        colour = self.placement_panel.colour()
        self.placement_panel.set_busy(True, f"Creating a {provider} session…")

        def work(context: TaskContext) -> tuple[ModelTab, Placement, Folded]:
            context.progress("Creating the session", 0.0)
            found = placement(path, provider, optimization, model_bytes=data,
                              cancel=context.token)
            context.check()
            return tab, found, fold(placement_overlay(found) if colour else None)

        self._placer.start(work, quiet_gc=True)

    @staticmethod
    def _timed(tab: ModelTab, found: Placement) -> str:
        """Fill the time per provider from the tab's profile, if it has one; what the
        summary says of where the time comes from ("" without a profile)."""
        timed = tab.run_results.get(PROFILE)
        if timed is None:
            return ""
        found.times = provider_times([(n.provider, n.time_ms) for n in timed.nodes])
        return f"the last profile, on {timed.provider}"

    def _on_placed(self, answer: tuple[ModelTab, Placement, Folded]) -> None:
        tab, found, folded = answer
        tab.run_results[PLACEMENT] = found
        if tab is not self._tab():
            return
        self.placement_panel.set_result(found, self._timed(tab, found))
        paint(tab, folded)
        fallbacks = found.fallbacks()
        self.statusMessage.emit(f"{tab.path.name}: {len(found.nodes)} nodes placed"
                                + (f", {len(fallbacks)} CPU fallbacks" if fallbacks else ""))

    def _placement_failed(self, message: str) -> None:
        self.placement_panel.set_busy(False)
        self.placement_panel.show_error(message)

    def _colour_placement(self, on: bool) -> None:
        tab = self._tab()
        if tab is None or tab.model is None:
            return
        found = tab.run_results.get(PLACEMENT)
        if on and found is not None:
            fold = fold_for(tab)
            self._painter.start(lambda _context: (tab, fold(placement_overlay(found))))
        elif not on and tab.overlay_data is not None and tab.overlay_data.kind == PLACEMENT:
            tab.set_overlay(None)

    def shutdown(self) -> None:
        for runner in (self._coster, self._painter, self._placer):
            runner.cancel()
