"""Issue 8 costs: profiling, capturing every intermediate, comparing, and folding a
heatmap into a layout, on real models from ../shared. Self-contained:
`python -m tests.benchmarks.inspect_run`.

  run_ms       median of 20 plain runs of the same input (the app's Session)
  profile_s    wall time of `profile` (1 warm-up + 10 measured runs, trace parsed)
  per_run_ms   profiler's mean run; node_sum_% = summed node time / per_run_ms
  capture_s    capture every node output of one run (optimisations off)
  captured     tensors and MiB held
  compare_s    ort:cpu:all vs ort:cpu:disabled with every intermediate compared
  fold_ms      folding per-node values into the shown layout (the GUI-thread cost of
               switching the heatmap back on; on the worker after a profile)
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared"))
CASES = [
    ("mnist", "models/zoo/mnist/mnist.onnx", "models/images/digit_3.jpg"),
    ("squeezenet", "models/zoo/onnx_light/light_squeezenet.onnx", "models/images/chelsea.png"),
    ("resnet50", "models/zoo/onnx_light/light_resnet50.onnx", "models/images/coffee.png"),
]
FOLD_LADDER = ("bert96.onnx", "dag100k.onnx")


def _clock(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def inspect_rows() -> list[dict[str, Any]]:
    from onnxstudio.layout.build import build_layout
    from onnxstudio.layout.state import default_state
    from onnxstudio.model import load_model
    from onnxstudio.render.overlay import OverlayData, build_overlay, profile_overlay
    from onnxstudio.runner.compare import compare, parse_config
    from onnxstudio.runner.feeds import request_feeds
    from onnxstudio.runner.intermediates import capture
    from onnxstudio.runner.pipeline import ImageSource, RunRequest
    from onnxstudio.runner.profile import profile
    from onnxstudio.runner.session import Session

    rows: list[dict[str, Any]] = []
    for name, model_rel, image_rel in CASES:
        model, image = SHARED / model_rel, SHARED / image_rel
        if not (model.exists() and image.exists()):
            continue
        request = RunRequest(model, images=[ImageSource(image.name, image)])
        session = Session(model, request.config)
        _, feeds = request_feeds(request, session)
        session.run(feeds)
        times = []
        for _ in range(20):
            start = time.perf_counter()
            session.run(feeds)
            times.append(time.perf_counter() - start)
        prof_s, result = _clock(lambda r=request: profile(r, runs=10, warmup=1))
        cap_s, cap = _clock(lambda r=request: capture(r))
        cmp_s, _ = _clock(lambda r=request: compare(r, parse_config("ort:cpu:all"),
                                                    parse_config("ort:cpu:disabled")))
        loaded = load_model(model)
        layout = build_layout(loaded, default_state(loaded.graph))
        heat = profile_overlay(result)
        fold_s, _ = _clock(lambda lo=layout, m=loaded, d=heat: build_overlay(lo, m.graph, d))
        rows.append({
            "model": name, "nodes": len(loaded.graph.nodes),
            "run_ms": f"{statistics.median(times) * 1000:.2f}",
            "profile_s": f"{prof_s:.2f}", "per_run_ms": f"{result.total_ms:.2f}",
            "node_sum_%": f"{100 * sum(n.time_ms for n in result.nodes) / result.total_ms:.0f}",
            "capture_s": f"{cap_s:.2f}",
            "captured": f"{len(cap.values)} / "
                        f"{sum(v.nbytes for v in cap.values.values()) / 2**20:.1f} MiB",
            "compare_s": f"{cmp_s:.2f}", "fold_ms": f"{fold_s * 1000:.1f}"})
    for ladder in FOLD_LADDER:  # folding cost on big graphs, with made-up node times
        path = SHARED / "ladder" / ladder
        if not path.exists():
            continue
        loaded = load_model(path)
        layout = build_layout(loaded, default_state(loaded.graph))
        values = {n.id: 0.001 * (i % 97) for i, n in enumerate(loaded.graph.nodes)}
        fold_s, _ = _clock(lambda lo=layout, m=loaded, v=values:
                           build_overlay(lo, m.graph, OverlayData("profile", "t", v)))
        rows.append({"model": path.stem, "nodes": len(loaded.graph.nodes),
                     "fold_ms": f"{fold_s * 1000:.1f}"})
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cells = [keys] + [[str(r.get(k, "–")) for k in keys] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(keys))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True))
                     for line in cells)


if __name__ == "__main__":
    print(format_rows(inspect_rows()))
