"""Paint and whole-window timings for the benchmark (offscreen Qt).

``measure_paint``: one complete paint of a laid-out graph in a GraphView fitted to a
1600×1000 viewport. ``measure_window``: the real user path — MainWindow.open_paths, the
background load and layout, the first complete paint, then the inferred shapes drawn —
and the longest the event loop went without running a 5 ms timer meanwhile (a frozen
window is what users notice).
"""

from __future__ import annotations

import itertools
import os
import time
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


def measure_window(path: Path) -> dict[str, float]:
    """Open ``path`` through the main window; time to painted, and the worst stall."""
    app = _app()
    from PySide6.QtCore import QTimer

    from onnxstudio.ui.main_window import MainWindow

    window = MainWindow()
    window.resize(*VIEWPORT)
    window.show()
    app.processEvents()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    t0 = time.perf_counter()
    ticks.append(t0)
    tab = window.open_paths([str(path)])[0]
    while tab.layout_data is None and not tab.error:
        app.processEvents()
        time.sleep(0.001)
    tab.view.viewport().repaint()
    painted = time.perf_counter() - t0
    # opening goes on until the inferred shapes are in and their labels drawn
    while tab.busy and not tab.error:
        app.processEvents()
        time.sleep(0.001)
    tab.view.viewport().repaint()
    shaped = time.perf_counter() - t0
    ticks.append(time.perf_counter())
    timer.stop()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    window.shutdown()
    window.close()
    return {"window_s": painted, "shaped_s": shaped,
            "stall_ms": max(gaps) * 1000 if gaps else 0.0}
