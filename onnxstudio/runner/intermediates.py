"""Capture intermediate tensors of a run by exposing them as extra graph outputs.

onnxruntime only returns graph outputs, so the chosen values are appended to
``graph.output`` of an in-memory copy of the model (the user's file is never written) and
that copy runs with graph optimisations off by default: an optimiser may fuse a value
away or compute it differently, and then it would not be the value the graph describes.
Everything asked for is held in memory at once, so sizes are estimated from inferred
shapes first and the selection is capped (with a warning) before anything runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, shape_inference

from onnxstudio.errors import InputError, RunError
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.feeds import request_feeds
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.session import Session, SessionConfig

DEFAULT_CAP_BYTES = 1 << 30  # 1 GiB of captured tensors
_PROTOBUF_LIMIT = 2**31 - 1
_ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
             14: 8, 15: 16, 16: 2}


@dataclass
class TensorStats:
    """What the inspector shows above a tensor's histogram and value table."""

    shape: tuple[int, ...]
    dtype: str
    size: int
    nbytes: int
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    nan: int = 0
    inf: int = 0
    zeros: int = 0

    def as_json(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def tensor_stats(arr: Any) -> TensorStats:
    """Statistics over the finite values (NaN/Inf are counted, not averaged in)."""
    a = np.asarray(arr)
    st = TensorStats(tuple(int(d) for d in a.shape), str(a.dtype), int(a.size), int(a.nbytes))
    if a.size == 0 or a.dtype.kind not in "fiub":
        return st
    x = a.astype(np.float64, copy=False)
    finite = np.isfinite(x)
    st.nan = int(np.isnan(x).sum())
    st.inf = int(np.isinf(x).sum())
    st.zeros = int((x == 0).sum())
    if finite.any():
        f = x[finite] if not finite.all() else x
        st.min, st.max = float(f.min()), float(f.max())
        st.mean, st.std = float(f.mean()), float(f.std())
    return st


def histogram(arr: Any, bins: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(counts, edges) over the finite values; empty arrays when there are none."""
    x = np.asarray(arr)
    if x.dtype.kind not in "fiub":
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    x = x.astype(np.float64, copy=False).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.histogram(x, bins=bins)


@dataclass
class Capture:
    source: str
    values: dict[str, np.ndarray]
    stats: dict[str, TensorStats]
    skipped: list[str] = field(default_factory=list)  # over the cap, not captured
    warnings: list[str] = field(default_factory=list)


def node_outputs(graph: onnx.GraphProto) -> list[str]:
    """Every value a main-graph node produces, in the file's (topological) order."""
    seen: set[str] = set()
    out = []
    for n in graph.node:
        for o in n.output:
            if o and o not in seen:
                seen.add(o)
                out.append(o)
    return out


CHILD_INFERENCE_NODES = 5000  # above this, the sizes' inference runs in a child process


def _inferred(proto: onnx.ModelProto, feeds: Mapping[str, Any]) -> dict[str, onnx.TypeProto]:
    """Types of all values with the inputs pinned to the fed shapes (so more shapes resolve)."""
    light = onnx.ModelProto()
    light.CopyFrom(proto)
    for vi in light.graph.input:
        arr = feeds.get(vi.name)
        if arr is None or not vi.type.HasField("tensor_type"):
            continue
        shape = vi.type.tensor_type.shape
        shape.ClearField("dim")
        for d in np.shape(arr):
            shape.dim.add().dim_value = int(d)
    if len(light.graph.node) > CHILD_INFERENCE_NODES and not _external(light):
        types = _inferred_in_child(light)
        if types is not None:
            return types
    try:
        inferred = shape_inference.infer_shapes(light)
    except Exception:  # inference is a help for sizing, never a reason to refuse
        inferred = light
    types = {vi.name: vi.type for vi in inferred.graph.value_info}
    types.update({vi.name: vi.type for vi in inferred.graph.output})
    return types


def _external(proto: onnx.ModelProto) -> bool:
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in proto.graph.initializer)


def _inferred_in_child(proto: onnx.ModelProto) -> dict[str, onnx.TypeProto] | None:
    """The value types of ``proto`` inferred in a child process (None: it failed). onnx's
    C++ inference holds the GIL all along: 0.5 s of dag100k's Compare froze the window."""
    import tempfile

    from onnxstudio.model.infer_child import ChildInference

    with tempfile.TemporaryDirectory(prefix="onnxstudio-capture-") as folder:
        path = Path(folder) / "pinned.onnx"
        path.write_bytes(proto.SerializeToString())
        types, _problem = ChildInference(path).result()
    return None if types is None else {vi.name: vi.type for vi in types.graph.value_info}


def _nbytes(t: onnx.TypeProto | None) -> int | None:
    if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        return None
    return math.prod(int(d.dim_value) for d in dims) * _ITEMSIZE.get(t.tensor_type.elem_type, 8)


def plan_capture(proto: onnx.ModelProto, feeds: Mapping[str, Any], names: Iterable[str],
                 cap_bytes: int = DEFAULT_CAP_BYTES
                 ) -> tuple[list[str], list[str], dict[str, onnx.TypeProto]]:
    """(kept, skipped, inferred types), in topological order, kept within ``cap_bytes``.

    Values of unknown size are counted as large as the largest known one, so an
    unresolvable shape cannot slip a huge tensor past the cap.
    """
    types = _inferred(proto, feeds)
    order = {n: i for i, n in enumerate(node_outputs(proto.graph))}
    wanted = sorted({n for n in names if n in order}, key=order.__getitem__)
    sizes = {n: _nbytes(types.get(n)) for n in wanted}
    largest = max((s for s in sizes.values() if s is not None), default=1 << 20)
    kept: list[str] = []
    skipped: list[str] = []
    total = 0
    for n in wanted:
        size = sizes[n] if sizes[n] is not None else largest
        assert size is not None
        if total + size > cap_bytes:
            skipped.append(n)
            continue
        kept.append(n)
        total += size
    return kept, skipped, types


def with_outputs(proto: onnx.ModelProto, names: Sequence[str],
                 types: Mapping[str, onnx.TypeProto] | None = None) -> onnx.ModelProto:
    """A copy of ``proto`` whose graph also outputs ``names`` (element type only where
    inference knew it: onnxruntime fills in the rest, and a wrong shape would be refused)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    present = {o.name for o in copy.graph.output}
    for name in names:
        if name in present:
            continue
        t = (types or {}).get(name)
        if t is not None and t.HasField("tensor_type") and t.tensor_type.elem_type:
            copy.graph.output.append(helper.make_tensor_value_info(
                name, t.tensor_type.elem_type, None))
        else:
            copy.graph.output.append(onnx.ValueInfoProto(name=name))
    return copy


def capture_feeds(model: Path, proto: onnx.ModelProto, feeds: Mapping[str, Any],
                  names: Iterable[str] | None, config: SessionConfig,
                  cap_bytes: int = DEFAULT_CAP_BYTES, source: str = "",
                  cancel: CancelToken | None = None) -> Capture:
    """Run ``feeds`` through a copy of ``proto`` that outputs ``names`` (None: all)."""
    produced = node_outputs(proto.graph)
    wanted = produced if names is None else list(names)
    known = set(produced)  # once: in the condition it was rebuilt for every name (dag100k's
    # Compare spent minutes there, holding the GIL the window needs)
    unknown = [n for n in wanted if n not in known and n not in feeds]
    if unknown:
        raise InputError(f"{model.name}: no node produces {', '.join(unknown[:5])}")
    kept, skipped, types = plan_capture(proto, feeds, wanted, cap_bytes)
    warnings = []
    if skipped:
        warnings.append(f"captured {len(kept)} of {len(kept) + len(skipped)} values: the rest "
                        f"would exceed the {cap_bytes / 2**20:.0f} MiB cap "
                        f"(first skipped: {skipped[0]})")
    extra = with_outputs(proto, kept, types)
    if extra.ByteSize() > _PROTOBUF_LIMIT:
        raise RunError(f"{model.name}: too large to copy in memory (over 2 GB without "
                       "external data); capture needs the weights stored as external data")
    session = Session(model, config, model_bytes=extra.SerializeToString(), cancel=cancel)
    del extra
    result = session.run(feeds).outputs
    values = {n: np.asarray(result[n]) for n in kept if n in result}
    values.update({n: np.asarray(feeds[n]) for n in wanted if n in feeds})
    return Capture(source, values, {n: tensor_stats(v) for n, v in values.items()},
                   skipped, warnings)


def capture(request: RunRequest, names: Iterable[str] | None = None,
            cap_bytes: int = DEFAULT_CAP_BYTES, optimization: str | None = "disable",
            cancel: CancelToken | None = None) -> Capture:
    """Capture ``names`` (None: every node output) for the request's first input.

    ``optimization`` overrides the request's level (None keeps it).
    """
    config = request.config if optimization is None else \
        replace(request.config, optimization=optimization)
    model = request.read()
    source, feeds = request_feeds(request, model.session(config, cancel=cancel), model)
    return capture_feeds(request.model, model.proto, feeds, names, config, cap_bytes, source,
                         cancel)
