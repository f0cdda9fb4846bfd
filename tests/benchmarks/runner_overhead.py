"""Runner overhead: the app's run path (minus Qt) against a bare InferenceSession.run.

For each model, the same preprocessed tensor is fed N times, interleaved, to
  bare      onnxruntime.InferenceSession(path).run(None, feeds)
  session   onnxstudio.runner.session.Session.run (RunOptions for cancel, timing, locking)
and the whole request the panel's worker executes (decode, preprocess, run, postprocess)
is timed too. Medians in ms. Self-contained: `python -m tests.benchmarks.runner_overhead`.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ONNXSTUDIO_SHARED", REPO.parent / "shared")) / "models"
CASES = [
    ("mnist", "zoo/mnist/mnist.onnx", "images/digit_3.jpg"),
    ("squeezenet (light)", "zoo/onnx_light/light_squeezenet.onnx", "images/chelsea.png"),
    ("resnet50 (light)", "zoo/onnx_light/light_resnet50.onnx", "images/coffee.png"),
]


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000.0


def runner_overhead_rows(runs: int = 50) -> list[dict]:
    """One row per model found under ../shared/models (missing ones are skipped)."""
    import onnxruntime as ort

    from onnxstudio.runner.pipeline import ImageSource, Pipeline, RunRequest

    rows: list[dict] = []
    for name, model_rel, image_rel in CASES:
        model, image = SHARED / model_rel, SHARED / image_rel
        if not (model.exists() and image.exists()):
            continue
        pipeline = Pipeline()
        request = RunRequest(model, images=[ImageSource(image.name, image)])
        (first,) = pipeline.execute(request)  # creates the session, warms up
        assert first.preprocessed is not None and pipeline.session is not None
        feeds = {first.preprocessed.plan.input_name: first.preprocessed.tensor}
        quiet = ort.SessionOptions()
        quiet.log_severity_level = 3
        bare = ort.InferenceSession(str(model), quiet, providers=["CPUExecutionProvider"])
        bare.run(None, feeds)
        t_bare: list[float] = []
        t_session: list[float] = []
        t_request: list[float] = []
        for _ in range(runs):
            t0 = time.perf_counter()
            bare.run(None, feeds)
            t1 = time.perf_counter()
            pipeline.session.run(feeds)
            t2 = time.perf_counter()
            pipeline.execute(request)
            t3 = time.perf_counter()
            t_bare.append(t1 - t0)
            t_session.append(t2 - t1)
            t_request.append(t3 - t2)
        b, s, r = _median_ms(t_bare), _median_ms(t_session), _median_ms(t_request)
        rows.append({"model": name, "runs": runs, "bare_ms": round(b, 3),
                     "runner_ms": round(s, 3), "overhead_ms": round(s - b, 3),
                     "overhead_pct": round((s - b) / b * 100.0, 1) if b else None,
                     "request_ms": round(r, 3)})
    return rows


def format_rows(rows: list[dict]) -> str:
    head = (f"{'model':<20} {'runs':>5} {'bare ms':>9} {'runner ms':>10} {'overhead':>9} "
            f"{'%':>6} {'request ms':>11}")
    lines = [head, "-" * len(head)]
    for r in rows:
        pct = "" if r["overhead_pct"] is None else f"{r['overhead_pct']:.1f}"
        lines.append(f"{r['model']:<20} {r['runs']:>5} {r['bare_ms']:>9.3f} "
                     f"{r['runner_ms']:>10.3f} {r['overhead_ms']:>9.3f} {pct:>6} "
                     f"{r['request_ms']:>11.3f}")
    lines.append("request = decode image + preprocess + run + postprocess (the panel's path)")
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_rows(runner_overhead_rows()))
