"""Paint and whole-window timings for the benchmark (offscreen Qt).

``measure_paint``: one complete paint of a laid-out graph in a GraphView fitted to a
1600×1000 viewport. ``measure_window``: the real user path — MainWindow.open_paths, the
background load and layout, the window's first paint of the graph, then the inferred
shapes drawn — and the longest the event loop went without running a 5 ms timer
meanwhile (a frozen window is what users notice).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

VIEWPORT = (1600, 1000)


def _app() -> Any:
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def measure_paint(model: Any, layout: Any) -> float:
    """Seconds for the first complete paint of ``layout`` (painter built off the clock too)."""
    app = _app()
    from onnxstudio.render.scene_painter import GraphPainter
    from onnxstudio.ui.canvas.graph_view import GraphView

    view = GraphView()
    view.resize(*VIEWPORT)
    view.show()
    app.processEvents()
    painter = GraphPainter(layout)
    view.set_layout(layout, keep_view=False, painter=painter)
    app.processEvents()  # let the viewport take its size and the view its first fit
    t0 = time.perf_counter()
    view.viewport().repaint()
    seconds = time.perf_counter() - t0
    view.close()
    return seconds


SETTLE_S = 0.3  # after each action, before its stall is read and the next one starts


class _Ticker:
    """A 5 ms timer on the GUI thread; the longest gap between its ticks is the stall.
    With ``ONNXSTUDIO_TRACE_STALLS=MS`` each run prints where the GUI thread was during
    every gap over MS (stall_trace.py)."""

    def __init__(self, app: Any) -> None:
        from PySide6.QtCore import QTimer

        self.app = app
        self.ticks: list[float] = []
        self.cpu_ticks: list[float] = []  # the GUI thread's CPU time at each tick
        self.cpu_ms: dict[str, float] = {}  # label: the most CPU the GUI thread spent in a gap
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.ticks.append(time.perf_counter())
        self.cpu_ticks.append(time.thread_time())

    def run(self, start: Callable[[], Any], done: Callable[[], bool],
            limit_s: float = 300.0, settle: bool = True, label: str = "") -> tuple[float, float]:
        """Call ``start``, spin the event loop until ``done()`` (and ``SETTLE_S`` longer with
        ``settle``); (seconds until done, worst stall ms). ``cpu_ms[label]`` keeps the most
        CPU time the GUI thread spent between two ticks: the work that blocked the loop,
        which a loaded machine inflates far less than the gap (starved of a core, or
        waiting for the GIL, the thread spends no CPU)."""
        from tests.benchmarks.stall_trace import StallTracer, threshold_ms

        trace = threshold_ms()
        self._tick()
        self.ticks, self.cpu_ticks = self.ticks[-1:], self.cpu_ticks[-1:]
        with contextlib.ExitStack() as stack:
            if trace > 0:
                stack.enter_context(StallTracer(lambda: self.ticks[-1], trace,
                                                label or getattr(start, "__name__", "?")))
            seconds, stall = self._run(start, done, limit_s, settle)
        cpu = max((b - a for a, b in itertools.pairwise(self.cpu_ticks)), default=0.0) * 1000
        self.cpu_ms[label] = max(self.cpu_ms.get(label, 0.0), cpu)
        return seconds, stall

    def _run(self, start: Callable[[], Any], done: Callable[[], bool],
             limit_s: float, settle: bool) -> tuple[float, float]:
        self.timer.start()
        t0 = self.ticks[0]
        start()
        while not done() and time.perf_counter() - t0 < limit_s:
            self.app.processEvents()
            time.sleep(0.001)
        seconds = time.perf_counter() - t0
        # What the action leaves for the next turns (panels, the minimap's image, a
        # heatmap's paint) is its own: keep ticking until it has settled, so its stalls
        # count here and not in the next action's column.
        while settle and time.perf_counter() - t0 - seconds < SETTLE_S:
            self.app.processEvents()
            time.sleep(0.001)
        self._tick()
        self.timer.stop()
        gaps = [b - a for a, b in itertools.pairwise(self.ticks)]
        return seconds, max(gaps) * 1000 if gaps else 0.0

    def action(self, label: str, start: Callable[[], Any], window: Any,
               done: Callable[[], bool] = lambda: True, limit_s: float = 300.0) -> float:
        """The worst stall (ms) of user action ``label``: from ``start`` until ``done()``
        and the window is quiet (no task running, no turn queued), and ``SETTLE_S``
        longer."""
        return self.run(start, lambda: done() and _quiet(), limit_s, label=label)[1]

    def cpu_row(self) -> dict[str, float]:
        """``X_cpu_ms`` for every stall column ``X_ms`` measured."""
        return {f"{label}_cpu_ms": ms for label, ms in self.cpu_ms.items()
                if label.endswith("stall")}


def _quiet() -> bool:
    """No task of the window's runs and no turn is queued."""
    from onnxstudio.ui import tasks

    return not tasks._turns and not tasks.any_busy()


class _FirstPaint:
    """Done once the tab's view paints with a layout (other than ``before``): the
    window's own first paint of the graph (forcing a repaint here would add one to the
    stall being measured); ``at``: when (perf_counter)."""

    def __init__(self, tab: Any, before: Any = None) -> None:
        from PySide6.QtCore import QEvent, QObject

        self.done = False
        self.at = 0.0

        class Filter(QObject):
            def eventFilter(self, _obj: Any, event: Any) -> bool:
                if (event.type() == QEvent.Type.Paint and not outer.done
                        and tab.layout_data is not None and tab.layout_data is not before):
                    outer.done, outer.at = True, time.perf_counter()
                return False

        outer = self
        self._filter = Filter()
        tab.view.viewport().installEventFilter(self._filter)


def measure_window(path: Path, extras: bool = True, expand: bool = True) -> dict[str, float]:
    """Open ``path`` through the main window (to the first paint, then until the inferred
    shapes are drawn), export what is shown as SVG, profile one run, expand everything
    (unless not ``extras``; not that last with ``expand`` False) and time repaints of the
    expanded graph while panning and zooming (frames.py); the time of each and the
    longest the event loop stalled."""
    app = _app()
    from onnxstudio.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(*VIEWPORT)
    window.show()
    app.processEvents()
    ticker = _Ticker(app)
    row: dict[str, float] = {}
    tabs: list[Any] = []

    watch: list[_FirstPaint] = []

    def painted() -> bool:
        tab = tabs[0] if tabs else None
        if tab is None:
            return False
        if not watch:
            watch.append(_FirstPaint(tab))
        return watch[0].done or bool(tab.error)

    row["window_s"], first_stall = ticker.run(
        lambda: tabs.extend(window.open_paths([str(path)])), painted, settle=False,
        label="stall")
    tab = tabs[0]
    row["shaped_s"], shape_stall = ticker.run(lambda: None, lambda: not tab.busy or tab.error,
                                               label="stall")
    row["shaped_s"] += row["window_s"]
    # What the open starts once the tab is shaped (the Cost dock's count, the minimap's
    # image) is the open's too: it landed in the SVG and PDF exports' columns (BERT-96's
    # export 43/20 ms was the Cost table filling; dag100k's PDF 64/2 its count's worker)
    settle_stall = ticker.action("stall", lambda: None, window)
    row["stall_ms"] = max(first_stall, shape_stall, settle_stall)
    from tests.benchmarks.frames import frame_row, frame_times
    from tests.benchmarks.run import peak_mb

    row["peak_mb"] = peak_mb()  # what showing the model took, before the extras below
    if tab.error or not extras:
        window.shutdown()
        return row
    row.update(_export_stall(ticker, tab, path))
    row.update(_profile_stall(ticker, window, tab))
    row.update(_run_compare_hide_stalls(ticker, window, tab))
    from tests.benchmarks.actions import action_stalls

    row.update(action_stalls(ticker, window, tab, path))
    if expand:
        before = tab.layout_data
        drawn = _FirstPaint(tab, before)  # the expanded view's first paint
        started = time.perf_counter()
        row["expand_s"], row["expand_stall_ms"] = ticker.run(
            tab.expand_all, lambda: tab.layout_data is not before and not tab.busy,
            label="expand_stall")
        row["expand_first_s"] = drawn.at - started if drawn.done else float("nan")
        row.update(frame_row(frame_times(tab.view)))
        row["expand_peak_mb"] = peak_mb()  # the peak after expanding and the tour
    row.update(_optimised_stall(ticker, window))
    row.update(ticker.cpu_row())
    window.shutdown()
    window.close()
    return row


def _export_stall(ticker: _Ticker, tab: Any, path: Path) -> dict[str, float]:
    """Export what is shown as SVG, then as PDF (the dialog's defaults)."""
    from onnxstudio.export.options import ExportOptions
    from onnxstudio.ui.dialogs import export_dialog

    row: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for suffix, key in ((".svg", "export"), (".pdf", "pdf_export")):
            flows: list[Any] = []
            row[f"{key}_s"], row[f"{key}_stall_ms"] = ticker.run(
                lambda s=suffix, f=flows: f.append(export_dialog.start_export(
                    None, tab.model, tab.layout_data, tab.view,
                    path=Path(folder) / f"{path.stem}{s}", options=ExportOptions())),
                lambda f=flows: bool(f) and (f[0] is None or f[0].result is not None
                                             or f[0].error is not None), label=f"{key}_stall")
    return row


def _optimised_stall(ticker: _Ticker, window: Any) -> dict[str, float]:
    """Model → Show Optimised Graph, until the diff tab's sides are drawn and shaped."""
    from onnxstudio.ui import diffing

    count = window.tabs.count()

    def drawn() -> bool:
        if window.tabs.count() == count:
            return not window.optimiser.busy  # refused or failed: no tab comes
        diff = window.tabs.widget(count)
        return diff.error is not None or all(
            side.layout_data is not None and not side.busy for side in diff.tabs())

    seconds, stall = ticker.run(lambda: diffing.show_optimised(window), drawn, limit_s=300.0,
                                label="optimised_stall")
    return {"optimised_s": seconds, "optimised_stall_ms": stall}


def _run_compare_hide_stalls(ticker: _Ticker, window: Any, tab: Any) -> dict[str, float]:
    """Run with random inputs, compare onnxruntime with itself unoptimised, and hide the
    shape chains (View → Hide Nodes, then shown again): issue 34's other actions."""
    from onnxstudio.runner.compare import parse_config
    from onnxstudio.ui.insight.compare_options import CompareOptions

    run, insight = window.run_panel, window.insight
    row: dict[str, float] = {}
    row["run_s"], row["run_stall_ms"] = ticker.run(
        run.run_random, lambda: run.has_run() and not run.controller.busy, limit_s=120.0,
        label="run_stall")
    options = CompareOptions(parse_config("ort:cpu:all"), parse_config("ort:cpu:disabled"),
                             1e-3)
    row["compare_s"], row["compare_stall_ms"] = ticker.run(
        lambda: insight.start_compare(options),
        lambda: insight.compare_panel.result() is not None, limit_s=300.0, label="compare_stall")
    stalls = []
    for kinds in (frozenset({"shape", "identity", "constant"}), frozenset()):
        before = tab.layout_data
        _seconds, stall = ticker.run(
            lambda k=kinds: window.canvas_choices.set_hidden(k, [tab]),
            lambda b=before: tab.layout_data is not b and not tab.busy, label="hide_stall")
        stalls.append(stall)
    row["hide_stall_ms"] = max(stalls)
    return row


def _profile_stall(ticker: _Ticker, window: Any, tab: Any) -> dict[str, float]:
    from onnxstudio.ui.insight.profile_panel import ProfileOptions

    insight = window.insight
    panel = insight.profile_panel
    seconds, stall = ticker.run(
        lambda: insight.start_profile(ProfileOptions("disable", 1, 0)),
        lambda: panel.result() is not None and not tab.busy, limit_s=120.0,
        label="profile_stall")
    return {"profile_s": seconds, "profile_stall_ms": stall}
