"""The one way the app and the CLI open a model: parse, infer shapes, build.

``load_model`` does all three; the window uses ``open_model``, which builds and returns
the graph without shapes and a ``PendingShapes`` to apply once the graph is drawn
(for large graphs the inference already runs in a child process meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from onnxstudio.errors import ModelLoadError
from onnxstudio.model.external import tensors_of
from onnxstudio.model.graph import Model
from onnxstudio.model.guard import unsafe_for_inference
from onnxstudio.model.infer_child import FORK_FAILED, ChildInference, ForkedInference
from onnxstudio.model.inference import infer_shapes
from onnxstudio.model.inferred import apply_inferred_types, apply_types
from onnxstudio.model.load import byte_checks, read_model_proto
from onnxstudio.model.reader import build_model
from onnxstudio.model.source import Shapes, file_stamp, mark_read_from

if TYPE_CHECKING:
    import onnx

Progress = Callable[[str, float], None]


# Above this many nodes, a GUI caller runs inference in a child process (see infer_child):
# in-process, onnx would hold the GIL (and freeze the window) for more than ~20 ms.
ISOLATE_INFERENCE_NODES = 400


def load_model(
    path: str | Path,
    *,
    shape_inference: bool = True,
    progress: Progress | None = None,
    overlap: bool = False,
    inferring: ForkedInference | None = None,
) -> Model:
    """Open ``path`` read-only; raise ModelLoadError naming the file and the reason.

    ``overlap``: infer shapes in a forked copy of this process while this one builds the
    graph (for a one-shot command: BERT-96 takes this process 0.24 s of CPU instead of
    0.46, dag100k 1.4 s instead of 2.5; the fork's 0.3 s / 1.5 s run meanwhile); where
    forking is refused, in this process. ``inferring``: that fork, started already
    (from the file); the caller cancels it if this raises.
    """
    path = Path(path)
    report = progress or (lambda _stage, _fraction: None)
    report("Reading", 0.0)
    stamp = file_stamp(path)
    proto, external = read_model_proto(path, byte_checks if inferring is None
                                       else inferring.checks)
    warnings: list[str] = []
    inferred = None
    forked = inferring or (ForkedInference(proto) if shape_inference and overlap else None)
    if shape_inference and forked is None:
        report("Inferring shapes", 0.3)
        inferred, problem = infer_shapes(proto)
        if problem:
            warnings.append(problem)
    report("Building graph", 0.6)
    try:
        model = build_model(
            proto, path, inferred=inferred, external_data=external,
            warnings=warnings)
    except BaseException as exc:
        if forked is not None:
            forked.cancel()
        if isinstance(exc, RecursionError):
            raise ModelLoadError(path, "graph nesting is too deep to show") from exc
        raise
    stamped: Shapes = "inferred" if shape_inference else "declared"
    if forked is not None:
        types, problem = forked.result()
        if problem == FORK_FAILED:  # crashed, as onnx does on what the guard finds
            problem = unsafe_for_inference(proto) or problem
        if problem:
            model.warnings.insert(0, problem)  # where build_model puts it
        if types is not None:
            apply_types(model, types)
    mark_read_from(model, path, stamp, stamped)
    report("Done", 1.0)
    return model


@dataclass(eq=False)
class PendingShapes:
    """Shape inference of an opened model, applied to it later by ``apply``."""

    proto: onnx.ModelProto | None  # small graphs infer in-process, from this
    child: ChildInference | None  # large ones in a child process started at open

    def apply(self, model: Model) -> int:
        """Wait for the inferred types and give them to ``model``'s values (in place);
        a problem becomes one of the model's warnings. Returns how many values changed."""
        if self.child is not None:
            inferred, problem = self.child.result()
        elif self.proto is not None:
            inferred, problem = infer_shapes(self.proto)
        else:
            return 0
        self.proto = self.child = None
        if problem and problem not in model.warnings:
            model.warnings.append(problem)
            model.derived.pop("summary", None)  # it lists the warnings
        return apply_inferred_types(model, inferred) if inferred is not None else 0

    def cancel(self) -> None:
        if self.child is not None:
            self.child.cancel()
        self.proto = self.child = None


def open_model(path: str | Path, *, progress: Progress | None = None
               ) -> tuple[Model, PendingShapes]:
    """Open ``path`` like ``load_model`` but without waiting for shapes: the Model's
    inferred types arrive with ``PendingShapes.apply`` (declared ones are there now)."""
    path = Path(path)
    report = progress or (lambda _stage, _fraction: None)
    report("Reading", 0.0)
    stamp = file_stamp(path)
    proto, external = read_model_proto(path)
    large = len(proto.graph.node) > ISOLATE_INFERENCE_NODES
    pending = PendingShapes(None if large else proto, ChildInference(path) if large else None)
    report("Building graph", 0.5)
    try:
        model = build_model(proto, path, external_data=external)
    except RecursionError as exc:
        pending.cancel()
        raise ModelLoadError(path, "graph nesting is too deep to show") from exc
    except BaseException:
        pending.cancel()
        raise
    mark_read_from(model, path, stamp, "declared")
    report("Done", 1.0)
    return model, pending


def model_from_proto(proto: onnx.ModelProto, path: str | Path,
                     inferred_by: tuple[onnx.ModelProto | None, str | None] | None = None
                     ) -> Model:
    """The Model of an in-memory proto (an edited copy of ``path``), shapes inferred;
    ``inferred_by``: what ``infer_shapes`` said of it elsewhere (a child process, which
    may hand back the value types only)."""
    path = Path(path)
    from onnx import external_data_helper

    inferred, problem = inferred_by or infer_shapes(proto)
    external = any(external_data_helper.uses_external_data(t)
                   for t in tensors_of(proto))
    return build_model(proto, path, inferred=inferred, external_data=external,
                       warnings=[problem] if problem else [])
