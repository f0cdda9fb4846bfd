"""Frame times of the fully expanded graph: full repaints of a real GraphView's viewport
while panning and zooming (issue 35: p95 within 16 ms).

``frame_times(view)`` walks a fixed tour over the shown layout — zooming in from the
whole graph to 1:1 at its middle, panning at 1:1, panning at Fit's smallest readable
zoom, zooming out again elsewhere — and times one synchronous ``viewport().repaint()``
at each stop (``perf_counter``; the scroll the move asked for is painted first, off the
clock). Every stop is a fresh area or zoom, so the caches a first visit fills count.
The tour starts once a big graph's far-zoom pictures are painted (``settled``: their
worker starts when the layout lands; dag100k's take ~0.3 s).

``python -m tests.benchmarks.frames bert96 dag100k`` measures the tour without the rest
of the benchmark: each model expanded whole (``ExpandState.expand_all``, as Expand All
does) in a 1600×1000 view, in a fresh process each, and prints p50/p95/max per model;
``--profile`` prints where the time of the tour's repaints goes instead (cProfile).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

STEPS = 10  # stops per leg of the tour: four legs


def _geometric(a: float, b: float, n: int) -> list[float]:
    return [a * (b / a) ** (k / (n - 1)) for k in range(n)]


def tour(width: float, height: float, view_w: int, view_h: int) -> list[tuple[float, float,
                                                                                float]]:
    """(scale, centre x, centre y) stops over a ``width``×``height`` drawing."""
    from onnxstudio.layout import viewport

    class _Size:  # whole_scale and fit_scale read only the drawing's size
        def __init__(self) -> None:
            self.width, self.height = width, height

    size: Any = _Size()
    whole = viewport.whole_scale(size, view_w, view_h)
    fit = viewport.fit_scale(size, view_w, view_h)
    lowest = min(whole, 1.0)
    long_x = width >= height  # pan along the drawing's long axis

    def along(fraction: float) -> tuple[float, float]:
        return (width * fraction, height / 2) if long_x else (width / 2, height * fraction)

    def pan(scale: float, start: float) -> list[tuple[float, float, float]]:
        step = (view_w if long_x else view_h) / scale / 2  # half a view per stop
        first = along(start)
        return [(scale, first[0] + (k * step if long_x else 0.0),
                 first[1] + (0.0 if long_x else k * step)) for k in range(STEPS)]

    middle = along(0.5)
    quarter = along(0.25)
    return ([(s, *middle) for s in _geometric(lowest, 1.0, STEPS)]
            + pan(1.0, 0.5)
            + pan(fit, 0.1)
            + [(s, *quarter) for s in _geometric(1.0, lowest, STEPS)])


def frame_times(view: Any) -> tuple[list[float], list[float]]:
    """Seconds of each full repaint of ``view``'s viewport along the tour: wall time, and
    the GUI thread's CPU time (what the code costs, whatever the neighbours on a shared
    machine take of the cores meanwhile)."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    layout = view.graph_layout()
    vp = view.viewport()
    settled(view)
    times, cpu = [], []
    for scale, x, y in tour(layout.width, layout.height, vp.width(), vp.height()):
        view._set_scale(scale)
        view.centerOn(QPointF(x, y))
        app.processEvents()  # the scroll's own (partial) repaint, off the clock
        t0, c0 = time.perf_counter(), time.thread_time()
        vp.repaint()
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return times, cpu


def settled(view: Any, limit_s: float = 120.0) -> float:
    """Spin the event loop until the view's far-zoom pictures are painted (a big graph's
    worker, ``ui/canvas/far_view.py``); the seconds that took."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    t0 = time.perf_counter()
    while view.far.pending() and time.perf_counter() - t0 < limit_s:
        app.processEvents()
        time.sleep(0.002)
    return time.perf_counter() - t0


def frame_row(times: tuple[list[float], list[float]]) -> dict[str, float]:
    """The benchmark's frame columns, in milliseconds: wall p50, p95, max; CPU p95."""
    wall, cpu = (np.asarray(t) * 1000 for t in times)
    p50, p95 = np.percentile(wall, [50, 95])
    return {"frame_p50_ms": float(p50), "frame_p95_ms": float(p95),
            "frame_max_ms": float(wall.max()),
            "frame_cpu_p95_ms": float(np.percentile(cpu, 95))}


def expanded_view(path: Path) -> Any:
    """A shown 1600×1000 GraphView of ``path`` with every group expanded (shapes drawn)."""
    from PySide6.QtWidgets import QApplication

    from onnxstudio.layout.cache import layout_model
    from onnxstudio.layout.state import ExpandState
    from onnxstudio.model.inference import infer_shapes
    from onnxstudio.model.load import read_model_proto
    from onnxstudio.model.reader import apply_inferred_types, build_model
    from onnxstudio.render.qt_surface import prebuilt_paths
    from onnxstudio.render.scene_painter import GraphPainter
    from onnxstudio.ui.canvas.graph_view import GraphView
    from tests.benchmarks.paint import VIEWPORT

    app = QApplication.instance() or QApplication([])
    proto, external = read_model_proto(path)
    model = build_model(proto, path, external_data=external)
    apply_inferred_types(model, infer_shapes(proto)[0])
    state = ExpandState()
    state.expand_all(model.graph, bodies=True,
                     functions={f.key: f.body for f in model.functions})
    layout = layout_model(model, state)
    painter = GraphPainter(layout).prepare()
    view = GraphView()
    view.resize(*VIEWPORT)
    view.show()
    app.processEvents()
    view.set_layout(layout, keep_view=False, painter=painter,
                    paths=prebuilt_paths(painter.prepared_routes()))
    app.processEvents()
    view._app = app  # keeps the application alive as long as the view
    return view


def _one(path: Path, profile: bool) -> dict[str, Any]:
    view = expanded_view(path)
    if not profile:
        return {"model": path.name, "boxes": len(view.graph_layout().boxes),
                **frame_row(frame_times(view))}
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    frame_times(view)
    prof.disable()
    pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    return {"model": path.name}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="frame times of fully expanded graphs")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile of the tour's repaints (stderr)")
    parser.add_argument("models", nargs="*", help="ladder file names or stems")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(_one(args.one, args.profile)))
        return 0
    from tests.benchmarks.run import REPO, ladder_files

    files = ladder_files()
    if args.models:
        files = [f for f in files if f.name in args.models or f.stem in args.models]
    for path in files:
        flags = ["--profile"] if args.profile else []
        proc = subprocess.run([sys.executable, "-m", "tests.benchmarks.frames", "--one",
                               str(path), *flags], cwd=REPO, text=True, check=False,
                              stdout=subprocess.PIPE)
        row = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 \
            else {"model": path.name, "error": f"exit {proc.returncode}"}
        print("  ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
