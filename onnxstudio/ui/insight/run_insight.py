"""See inside a run: the glue between the profile, tensor and compare panels, the worker
threads that do the work, and the current tab's canvas.

The panels only gather choices and show results; this object turns their requests into
background tasks (`TaskRunner`: the newest request wins, a stale answer is dropped),
feeds them the run panel's last input, and paints the answers on the graph (heatmap,
divergence colours) through the tab, which keeps them across re-layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from onnxstudio.errors import OnnxStudioError
from onnxstudio.layout.types import Layout
from onnxstudio.model import Graph, Node
from onnxstudio.model.index import node_by_id
from onnxstudio.render.overlay import (
    Overlay,
    OverlayData,
    build_overlay,
    divergence_overlay,
    profile_overlay,
)
from onnxstudio.render.scene_painter import GraphPainter
from onnxstudio.runner.compare import Comparison, RunConfig
from onnxstudio.runner.inspect_child import window_capture, window_compare
from onnxstudio.runner.intermediates import Capture
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.profile import ProfileResult
from onnxstudio.runner.profile_child import profile_isolated
from onnxstudio.runner.profile_rows import table_rows
from onnxstudio.ui.canvas.drawing import overview_image
from onnxstudio.ui.insight.compare_options import CompareOptions, config_text
from onnxstudio.ui.insight.compare_panel import ComparePanel, node_names
from onnxstudio.ui.insight.profile_panel import ProfileOptions, ProfilePanel
from onnxstudio.ui.insight.tensor_dock import TensorDock
from onnxstudio.ui.tasks import TaskContext, TaskRunner, next_turn

if TYPE_CHECKING:
    from onnxstudio.model import Model
    from onnxstudio.ui.canvas.model_tab import ModelTab
    from onnxstudio.ui.insight.run_panel import RunPanel

# Keys of ModelTab.run_results, named as the overlay each result paints.
PROFILE, COMPARISON = "profile", "divergence"
OVERLAY_OF: dict[str, Callable[[Any], OverlayData]] = {
    PROFILE: profile_overlay, COMPARISON: divergence_overlay}


@dataclass
class Painted:
    """An overlay's data and, when a layout was shown, its boxes' colours (folded on the
    worker so the GUI thread only swaps them in)."""

    data: OverlayData
    layout: Layout | None
    overlay: Overlay | None
    overview: QImage | None = None  # the minimap's image with the overlay


def _fold(data: OverlayData, layout: Layout | None, graph: Graph,
          painter: GraphPainter | None, dpr: float) -> Painted:
    if layout is None:
        return Painted(data, None, None)
    overlay = build_overlay(layout, graph, data)
    fits = painter is not None and painter.layout is layout
    return Painted(data, layout, overlay,
                   overview_image(painter, dpr, overlay) if fits and painter else None)


def _node_caption(node: Node) -> str:
    return f"{node.op_type} '{node.name}' ({node.id})" if node.name else \
        f"{node.op_type} {node.id}"


class RunInsight(QObject):
    """Owns the three panels and their tasks; the window forwards tab changes to it."""

    statusMessage = Signal(str)
    showPanel = Signal(str)  # "profile" | "tensor" | "compare": raise that dock

    def __init__(self, current_tab: Callable[[], ModelTab | None], run_panel: RunPanel,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tab = current_tab
        self.run_panel = run_panel
        self.profile_panel = ProfilePanel()
        self.compare_panel = ComparePanel()
        self.tensor_dock = TensorDock()
        self._profiler = TaskRunner(self)
        self._comparer = TaskRunner(self)
        self._capturer = TaskRunner(self)
        self._captured: dict[str, Any] = {}  # value name -> array, for the last run
        self._capture_tab: ModelTab | None = None
        self._pending_value: str | None = None

        self.profile_panel.profileRequested.connect(self.start_profile)
        self.profile_panel.nodeActivated.connect(self._reveal)
        self.profile_panel.heatmapToggled.connect(lambda on: self._toggle(PROFILE, on))
        self.compare_panel.compareRequested.connect(self.start_compare)
        self.compare_panel.nodeActivated.connect(self._reveal)
        self.compare_panel.colourToggled.connect(lambda on: self._toggle(COMPARISON, on))
        self.tensor_dock.valueChosen.connect(self.show_value)
        self.tensor_dock.captureAllRequested.connect(self.capture_all)
        self.run_panel.runFinished.connect(lambda _outcomes: self._forget_captures())
        self.run_panel.compareRequested.connect(self.compare_test_set)
        self._jump = False  # reveal the first divergence when the comparison lands

        for runner, panel in ((self._profiler, self.profile_panel),
                              (self._comparer, self.compare_panel)):
            runner.failed.connect(panel.show_error)
            panel.cancelRequested.connect(runner.cancel)
            runner.busyChanged.connect(lambda busy, p=panel: p.set_busy(busy) if not busy
                                        else None)
        self._profiler.finished.connect(self._on_profiled)
        self._profiler.progress.connect(self.profile_panel.show_progress)
        self._comparer.finished.connect(self._on_compared)
        self._capturer.finished.connect(self._on_captured)
        self._capturer.failed.connect(self.tensor_dock.show_error)

    # -- the current model ------------------------------------------------------------
    def show_model(self, tab: ModelTab | None, model: Model | None) -> None:
        """A tab became current (or finished loading): show its own results."""
        path = tab.path if tab is not None and model is not None else None
        self.profile_panel.set_model(path, model)
        self.compare_panel.set_model(path, model)
        if tab is not None and model is not None:
            self.profile_panel.set_result(tab.run_results.get(PROFILE))
            self.compare_panel.set_result(tab.run_results.get(COMPARISON))
        if tab is not self._capture_tab:
            self._forget_captures()
            self._capture_tab = tab
        self.tensor_dock.set_node(None, [])

    def show_selection(self, tab: ModelTab, ids: list[str]) -> None:
        """A node was clicked: offer its outputs, and show the first one after a run."""
        model = tab.model
        node = node_by_id(model, ids[0]) if model is not None and len(ids) == 1 else None
        if node is None:
            return
        outputs = [o for o in node.outputs if o]
        self.tensor_dock.set_node(_node_caption(node), outputs)
        if outputs and self.tensor_dock.isVisible():
            self.show_value(outputs[0])

    def edge_clicked(self, value: str) -> None:
        """An edge was clicked: that tensor, in the tensor panel, named by its producer."""
        tab = self._tab()
        caption = "Graph input"
        if tab is not None and tab.model is not None:
            found = tab.model.graph.values.get(value)
            if found is not None and found.producer is not None:
                caption = "Output of " + _node_caption(tab.model.graph.nodes[found.producer])
        self.tensor_dock.set_node(caption, [value])
        self.showPanel.emit("tensor")
        self.show_value(value)

    # -- tensors ----------------------------------------------------------------------
    def _forget_captures(self) -> None:
        self._captured.clear()
        self._capturer.cancel()
        self.tensor_dock.reset()

    def show_value(self, value: str) -> None:
        """Show ``value`` of the last run: from the cache, or captured on a worker."""
        if value in self._captured:
            self.tensor_dock.show_tensor(value, self._captured[value])
            return
        if not self.run_panel.has_run():
            self.tensor_dock.clear("Run the model first (drop an image or use Random "
                                   f"inputs), then click {value!r} again to see its values")
            return
        request = self._request(self.tensor_dock.show_error)
        if request is None:
            return
        self._pending_value = value
        self.tensor_dock.set_busy(f"Capturing {value}…")
        self._capturer.start(lambda context: self._capture(context, request, [value]))

    def capture_all(self) -> None:
        """Every node output of the last run at once (capped in memory), so later clicks
        are instant."""
        if not self.run_panel.has_run():
            self.tensor_dock.show_error("Run the model first, then capture its tensors")
            return
        request = self._request(self.tensor_dock.show_error)
        if request is None:
            return
        self._pending_value = None
        self.tensor_dock.set_busy("Capturing every intermediate tensor…")
        self._capturer.start(lambda context: self._capture(context, request, None))

    @staticmethod
    def _capture(context: TaskContext, request: RunRequest,
                 names: list[str] | None) -> Capture:
        context.progress("Capturing", 0.0)
        return window_capture(request, names, cancel=context.token)

    def _on_captured(self, result: Capture) -> None:
        self._captured.update(result.values)
        if result.warnings:
            self.tensor_dock.show_warning(" ".join(result.warnings))
        value = self._pending_value
        if value is not None and value in self._captured:
            self.tensor_dock.show_tensor(value, self._captured[value])
        elif value is None:
            self.tensor_dock.show_captured(len(result.values))
            self.statusMessage.emit(f"Captured {len(result.values)} tensors "
                                     f"({sum(v.nbytes for v in result.values.values()) / 2**20:.1f}"
                                     " MiB)")

    def captured(self) -> dict[str, Any]:
        return dict(self._captured)

    # -- profile ----------------------------------------------------------------------
    def start_profile(self, options: ProfileOptions | None = None) -> None:
        options = options or self.profile_panel.options()
        request = self._request(self.profile_panel.show_error)
        tab = self._tab()
        if request is None or tab is None or tab.model is None:
            return
        request = replace(request, config=replace(request.config,
                                                  optimization=options.optimization))
        source = "the last input" if self.run_panel.has_run() else "random inputs"
        self.profile_panel.set_busy(True, f"Profiling {options.runs} run(s) of {source}…")
        self.showPanel.emit("profile")
        model = tab.model

        def work(context: TaskContext) -> ProfileResult:
            result = profile_isolated(
                request, runs=options.runs, warmup=options.warmup, cancel=context.token,
                progress=lambda done, total: context.progress(
                    f"Profiling: run {done} of {total}", done / total))
            table_rows(result, model)  # here, not when the result lands on the GUI thread
            return result

        self._launch(self._profiler, tab, work, profile_overlay)

    def _on_profiled(self, answer: tuple[ModelTab, ProfileResult, Painted]) -> None:
        tab, result, _ = answer
        self._landed(PROFILE, answer, self.profile_panel.set_result,
                     self.profile_panel.heatmap_enabled())
        self.statusMessage.emit(f"Profiled {tab.path.name}: {result.total_ms:.2f} ms per run")

    # -- compare ----------------------------------------------------------------------
    def compare_test_set(self) -> None:
        """A failing test set's Compare: onnxruntime, as the run panel runs it, against
        onnx's reference evaluator (whose kernels onnx's expected outputs come from), then
        the first diverging node selected in the graph."""
        config = self.run_panel.session_config()
        a, b = RunConfig("ort", config.provider, config.optimization), RunConfig("reference")
        self.compare_panel.form.choose(a, b)
        self.start_compare(CompareOptions(a, b, None), jump=True)

    def start_compare(self, options: CompareOptions | None = None, jump: bool = False) -> None:
        self._jump = jump
        if options is None:
            try:
                options = self.compare_panel.options()
            except OnnxStudioError as exc:  # e.g. a tolerance that is not a number
                self.compare_panel.show_error(str(exc))
                self.showPanel.emit("compare")
                return
        request = self._request(self.compare_panel.show_error)
        tab = self._tab()
        if request is None or tab is None or tab.model is None:
            return
        source = "the last input" if self.run_panel.has_run() else "random inputs"
        self.compare_panel.set_busy(
            True, f"Running {config_text(options.a)} and {config_text(options.b)} "
                  f"on {source}…")
        self.showPanel.emit("compare")
        model = tab.model

        def compute(context: TaskContext) -> Comparison:
            result = window_compare(request, options.a, options.b, options.tolerance,
                                    options.model_b, cancel=context.token)
            node_names(model)  # what the result's tables name the nodes by
            return result

        self._launch(self._comparer, tab, compute, divergence_overlay)

    def _on_compared(self, answer: tuple[ModelTab, Comparison, Painted]) -> None:
        result = answer[1]
        self._landed(COMPARISON, answer, self.compare_panel.set_result,
                     self.compare_panel.colour_by_divergence())
        first = result.first_divergence
        if self._jump and first is not None and answer[0] is self._tab():
            self._reveal(first.id)
            self.showPanel.emit("compare")  # the verdict and why, beside the selected node
        self._jump = False
        known = " (a known deviation of the reference evaluator)" if first and first.known \
            else ""
        self.statusMessage.emit(
            f"Compared {result.a.label} with {result.b.label}: "
            + (f"first divergence at {first.op_type} '{first.name or first.id}'{known}"
               if first else "all values agree"))

    # -- shared -----------------------------------------------------------------------
    @staticmethod
    def _launch(runner: TaskRunner, tab: ModelTab, compute: Callable[[TaskContext], Any],
                overlay_of: Callable[[Any], OverlayData]) -> None:
        """Compute on a worker (cancelling the task terminates its onnxruntime runs), then
        fold the answer into the layout shown now."""
        layout, painter, dpr = tab.layout_data, tab.view.painter(), tab.devicePixelRatioF()
        assert tab.model is not None
        graph = tab.model.graph

        def work(context: TaskContext) -> tuple[ModelTab, Any, Painted]:
            result = compute(context)
            context.check()
            return tab, result, _fold(overlay_of(result), layout, graph, painter, dpr)

        runner.start(work, quiet_gc=True)  # a full collection froze the window 90 ms

    def _landed(self, key: str, answer: tuple[ModelTab, Any, Painted],
                show: Callable[[Any], None], paint: bool) -> None:
        """Keep the answer with its tab; show and paint it if that tab is current (the
        heatmap two turns after the tables, once their delayed relayout has painted too:
        in one turn with them, BERT-96's profile froze the window for 85 ms)."""
        tab, result, painted = answer
        tab.run_results[key] = result
        if tab is self._tab():
            show(result)
            if paint:
                next_turn(tab, lambda: self._paint(tab, painted), turns=2)

    def _request(self, report: Callable[[str], None]) -> RunRequest | None:
        """The run panel's last input, on the model as the current tab holds it: its
        edited bytes (never a parsed proto, see RunRequest), also when nothing ran since
        the edit."""
        try:
            request = self.run_panel.inspection_request()
        except ValueError as exc:
            report(str(exc))
            return None
        tab = self._tab()
        if tab is not None and tab.path == request.model:
            request = replace(request, model_bytes=tab.model_bytes)
        return request

    def _paint(self, tab: ModelTab, painted: Painted) -> None:
        if tab is not self._tab():
            return  # another tab came to the front meanwhile: its own results show
        # A prebuilt overlay only fits the layout it was folded into; else fold again.
        fresh = painted.layout is not None and painted.layout is tab.layout_data
        if fresh:
            tab.set_overlay(painted.data, painted.overlay, painted.overview)
        else:
            tab.set_overlay(painted.data)

    def _toggle(self, key: str, on: bool) -> None:
        tab = self._tab()
        if tab is None:
            return
        result = tab.run_results.get(key)
        if on and result is not None:
            tab.set_overlay(OVERLAY_OF[key](result))
        elif not on and tab.overlay_data is not None and tab.overlay_data.kind == key:
            tab.set_overlay(None)

    def clear_overlay(self) -> None:
        """The legend's ✕: plain colours again, and the panels' checkboxes follow."""
        tab = self._tab()
        if tab is None or tab.overlay_data is None:
            return
        kind = tab.overlay_data.kind
        tab.set_overlay(None)
        if kind in (PROFILE, COMPARISON):  # the cost and placement colours: their own dock
            box = (self.profile_panel.heatmap_check if kind == PROFILE
                   else self.compare_panel.form.colour_check)
            box.setChecked(False)

    def _reveal(self, node_id: str) -> None:
        tab = self._tab()
        if tab is not None:
            tab.reveal(node_id)
            tab.view.set_selection([node_id])

    def shutdown(self) -> None:
        for runner in (self._profiler, self._comparer, self._capturer):
            runner.cancel()
