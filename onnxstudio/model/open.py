"""The one call the app and the CLI use to open a model: parse, infer shapes, build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx

from onnxstudio.errors import ModelLoadError
from onnxstudio.model.graph import Model
from onnxstudio.model.infer_child import infer_shapes_isolated
from onnxstudio.model.load import read_model_proto
from onnxstudio.model.reader import build_model

Progress = Callable[[str, float], None]


def infer_shapes(proto: onnx.ModelProto) -> tuple[onnx.ModelProto | None, str | None]:
    """onnx's own shape inference, tolerant: returns (inferred model, problem or None).

    Strict mode first, because only it reports what went wrong; on failure the lenient
    mode still gives the shapes it could infer, so one bad node does not blank them all.
    """
    try:
        return onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True), None
    except Exception as exc:  # onnx raises several types (InferenceError, RuntimeError...)
        lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        problem = f"shape inference failed: {lines[0] if lines else type(exc).__name__}"
    try:
        return onnx.shape_inference.infer_shapes(proto, strict_mode=False), problem
    except Exception:
        return None, problem


# Above this many nodes, a GUI caller runs inference in a child process (see infer_child).
ISOLATE_INFERENCE_NODES = 5000


def load_model(
    path: str | Path,
    *,
    shape_inference: bool = True,
    isolate_inference: bool = False,
    progress: Progress | None = None,
) -> Model:
    """Open ``path`` read-only; raise ModelLoadError naming the file and the reason.

    ``isolate_inference``: the caller is a GUI, so large graphs infer in a child process
    rather than holding the GIL (and so the event loop) for hundreds of milliseconds.
    """
    path = Path(path)
    report = progress or (lambda _stage, _fraction: None)
    report("Reading", 0.0)
    proto, external = read_model_proto(path)
    warnings: list[str] = []
    inferred = None
    if shape_inference:
        report("Inferring shapes", 0.3)
        if isolate_inference and len(proto.graph.node) > ISOLATE_INFERENCE_NODES:
            inferred, problem = infer_shapes_isolated(path)
        else:
            inferred, problem = infer_shapes(proto)
        if problem:
            warnings.append(problem)
    report("Building graph", 0.6)
    try:
        model = build_model(
            proto, path, inferred=inferred, external_data=external,
            warnings=warnings)
    except RecursionError as exc:
        raise ModelLoadError(path, "graph nesting is too deep to show") from exc
    report("Done", 1.0)
    return model
