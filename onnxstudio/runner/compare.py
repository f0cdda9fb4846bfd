"""Run one input on two configurations and find where their values part ways.

A configuration is onnxruntime with a provider and an optimisation level
(``ort:cpu:all``, ``ort:cpu:disabled``) or onnx's ``ReferenceEvaluator`` (``reference``);
side B may also run another copy of the model (quantised, edited, re-exported), values
paired by the model diff's structural matching, names second. Outputs come from a plain
run of each side; intermediates from a capture run
(extra outputs block fusions, so on an optimised side they show what the unfused kernels
compute). The first diverging node, in topological order, is where to look.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from onnxstudio.errors import InputError, RunError, with_details
from onnxstudio.model.diff import diff_models
from onnxstudio.model.external import load_external_weights
from onnxstudio.model.reader import build_model
from onnxstudio.runner.cancel import CancelToken
from onnxstudio.runner.deviations import known_deviation, missing_operator, missing_text
from onnxstudio.runner.feeds import request_feeds
from onnxstudio.runner.intermediates import DEFAULT_CAP_BYTES, capture_feeds, node_outputs
from onnxstudio.runner.pipeline import RunRequest
from onnxstudio.runner.session import CPU, OPTIMIZATION_LEVELS, SessionConfig
from onnxstudio.runner.source import ModelSource
from onnxstudio.runner.tolerance import coarsest, describe, relative_for

_PROVIDERS = {"cpu": CPU, "cuda": "CUDAExecutionProvider", "tensorrt": "TensorrtExecutionProvider",
              "dml": "DmlExecutionProvider", "coreml": "CoreMLExecutionProvider",
              "openvino": "OpenVINOExecutionProvider", "rocm": "ROCMExecutionProvider"}
_LEVELS = {"disabled": "disable", "none": "disable", "off": "disable", "enabled": "all"}


@dataclass(frozen=True)
class RunConfig:
    """One side of a comparison: onnxruntime (provider, level) or the reference evaluator."""

    engine: str  # "ort" or "reference"
    provider: str = CPU
    optimization: str = "all"

    @property
    def label(self) -> str:
        if self.engine == "reference":
            return "reference"
        short = next((k for k, v in _PROVIDERS.items() if v == self.provider), self.provider)
        return f"ort:{short}:{self.optimization}"


def parse_config(text: str) -> RunConfig:
    """``ort[:PROVIDER[:LEVEL]]`` or ``reference``; PROVIDER cpu/cuda/... or a full name."""
    parts = text.strip().split(":")
    if parts[0].lower() in ("reference", "ref", "onnx"):
        return RunConfig("reference")
    if parts[0].lower() not in ("ort", "onnxruntime") or len(parts) > 3:
        raise InputError(f"configuration {text!r}: expected ort:PROVIDER:LEVEL or reference")
    provider = _PROVIDERS.get(parts[1].lower(), parts[1]) if len(parts) > 1 and parts[1] else CPU
    level = parts[2].lower() if len(parts) > 2 and parts[2] else "all"
    level = _LEVELS.get(level, level)
    if level not in OPTIMIZATION_LEVELS:
        raise InputError(f"configuration {text!r}: unknown optimisation level {level!r} "
                         f"(choose from disabled, basic, extended, all)")
    return RunConfig("ort", provider, level)


@dataclass
class Difference:
    name: str
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    max_abs: float
    max_rel: float
    cosine: float
    exceeds: bool
    producer: int | None = None  # main-graph node index, None for graph inputs/outputs only
    ratio: float = 0.0  # max_abs over the allowed difference: above 1 exceeds

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "shape_a": list(self.shape_a), "shape_b": list(self.shape_b),
                "max_abs": self.max_abs, "max_rel": self.max_rel, "cosine": self.cosine,
                "exceeds": self.exceeds, "ratio": self.ratio,
                "node": None if self.producer is None else f"n{self.producer}"}


@dataclass
class Divergence:
    index: int
    name: str
    op_type: str
    value: str  # the output of that node that diverged
    known: str = ""  # a known deviation of the reference evaluator explains it

    @property
    def id(self) -> str:
        return f"n{self.index}"


@dataclass
class Comparison:
    model: Path
    source: str
    a: RunConfig
    b: RunConfig
    tolerance: float
    outputs: list[Difference]
    intermediates: list[Difference]  # topological order
    first_divergence: Divergence | None
    warnings: list[str] = field(default_factory=list)
    tolerance_note: str = ""  # which tolerance was used, e.g. "2e-3 for float16 (...)"

    def node_ratio(self) -> dict[str, float]:
        """Node id -> worst (max abs / allowed difference) of its outputs: above 1 exceeds
        the tolerance; the graph is coloured by this, so colour and verdict agree."""
        worst: dict[str, float] = {}
        for d in self.intermediates:
            if d.producer is not None:
                key = f"n{d.producer}"
                worst[key] = max(worst.get(key, 0.0), d.ratio)
        return worst

    def as_json(self) -> dict[str, Any]:
        fd = self.first_divergence
        return {"model": str(self.model), "input": self.source, "a": self.a.label,
                "b": self.b.label, "tolerance": self.tolerance,
                "tolerance_used": self.tolerance_note,
                "outputs": [d.as_json() for d in self.outputs],
                "nodes": [d.as_json() for d in self.intermediates],
                "first_divergence": None if fd is None else
                {"id": fd.id, "name": fd.name, "op_type": fd.op_type, "value": fd.value,
                 "known_deviation": fd.known or None},
                "warnings": self.warnings}


def difference(name: str, a: Any, b: Any, tolerance: float | None = None) -> Difference:
    """max |a-b|; max relative error where values are not ~0; cosine similarity.

    Exceeds when max |a-b| > tolerance × max(1, max |a|): absolute for small values,
    relative for large ones, so one threshold serves logits and raw activations alike.
    ``tolerance`` None: the default for the coarser of the two dtypes (see tolerance.py).
    """
    x, y = np.asarray(a), np.asarray(b)
    tolerance = relative_for(coarsest(x.dtype, y.dtype), tolerance)
    sa, sb = tuple(int(d) for d in x.shape), tuple(int(d) for d in y.shape)
    if sa != sb or x.dtype.kind not in "fiub" or y.dtype.kind not in "fiub":
        same = sa == sb and bool(np.array_equal(x, y))
        return Difference(name, sa, sb, 0.0 if same else float("inf"),
                          0.0 if same else float("inf"), 1.0 if same else 0.0, not same,
                          ratio=0.0 if same else float("inf"))
    xf, yf = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    if xf.size == 0:
        return Difference(name, sa, sb, 0.0, 0.0, 1.0, False)
    both_nan = np.isnan(xf) & np.isnan(yf)
    diff = np.where(both_nan, 0.0, np.abs(xf - yf))
    diff = np.where(np.isnan(diff), np.inf, diff)  # NaN on one side only: infinitely off
    max_abs = float(diff.max())
    denom = np.maximum(np.abs(xf), np.abs(yf))
    finite = np.isfinite(denom)
    scale = float(denom[finite].max()) if finite.any() else 0.0
    mask = denom > max(scale * 1e-6, 1e-30)
    max_rel = float((diff[mask] / denom[mask]).max()) if mask.any() else \
        (0.0 if max_abs == 0.0 else float("inf"))
    ok = np.isfinite(xf) & np.isfinite(yf)
    nx, ny = float(np.linalg.norm(xf[ok])), float(np.linalg.norm(yf[ok]))
    cosine = float(np.dot(xf[ok], yf[ok]) / (nx * ny)) if nx > 0 and ny > 0 else \
        (1.0 if nx == ny else 0.0)
    ref = np.abs(xf[np.isfinite(xf)])
    bound = tolerance * max(1.0, float(ref.max()) if ref.size else 1.0)
    return Difference(name, sa, sb, max_abs, max_rel, cosine, not max_abs <= bound,
                      ratio=max_abs / bound if bound > 0 else
                      (0.0 if max_abs == 0.0 else float("inf")))


def _reference(side: ModelSource, feeds: Mapping[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(outputs, every intermediate) from onnx's ReferenceEvaluator."""
    from onnx.reference import ReferenceEvaluator

    model, proto = side.path, side.proto
    if side.external:  # the weights of a copy: ``proto`` stays as read
        copy = onnx.ModelProto()
        copy.CopyFrom(proto)
        load_external_weights(copy, model)
        proto = copy
    try:
        ev = ReferenceEvaluator(proto)
        results = ev.run(None, dict(feeds), intermediate=True)
    except Exception as exc:
        missing = missing_operator(str(exc))
        if missing:
            raise RunError(with_details(f"{model.name}: {missing_text(missing)}", str(exc))
                           ) from exc
        raise RunError(f"{model.name}: onnx's reference evaluator cannot run this model: "
                       f"{str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__}"
                       ) from exc
    assert isinstance(results, dict)
    outputs = {o.name: results[o.name] for o in proto.graph.output if o.name in results}
    return outputs, results


def _side(side: ModelSource, feeds: Mapping[str, Any], cfg: RunConfig, names: list[str],
          cap_bytes: int, cancel: CancelToken | None
          ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    if cfg.engine == "reference":
        outputs, every = _reference(side, feeds)
        return outputs, {n: every[n] for n in names if n in every}, []
    config = SessionConfig(cfg.provider, cfg.optimization)
    outputs = side.session(config, cancel=cancel).run(feeds).outputs
    cap = capture_feeds(side.path, side.proto, feeds, names, config, cap_bytes, cancel=cancel)
    return outputs, cap.values, cap.warnings


def _io_names(proto: onnx.ModelProto) -> list[str]:
    return [v.name for v in (*proto.graph.input, *proto.graph.output)]


def value_pairs(model_a: Path, proto_a: onnx.ModelProto, model_b: Path,
                proto_b: onnx.ModelProto) -> dict[str, str]:
    """A's tensor names to B's: by the model diff's structural pairing (so a re-export
    with other names still compares node by node), then equal names for the rest."""
    a = build_model(proto_a, model_a)
    b = build_model(proto_b, model_b)
    pairs = diff_models(a, b, weights=False).value_map()
    taken = set(pairs.values())
    names_b = set(node_outputs(proto_b.graph)) | set(_io_names(proto_b))
    for name in (*node_outputs(proto_a.graph), *_io_names(proto_a)):
        if name not in pairs and name in names_b and name not in taken:
            pairs[name] = name
    return pairs


def compare(request: RunRequest, a: RunConfig, b: RunConfig, tolerance: float | None = None,
            model_b: Path | None = None, cap_bytes: int = DEFAULT_CAP_BYTES,
            cancel: CancelToken | None = None) -> Comparison:
    """Compare the request's first input on ``a`` and ``b`` (``b`` on ``model_b`` if given);
    ``tolerance`` None follows each value's dtype. Side A is the model the request runs
    (its edited copy, if any); each model is parsed once for all its sessions."""
    side_a = request.read()
    model_a, proto_a = side_a.path, side_a.proto
    side_b = side_a
    if model_b is not None and (Path(model_b) != model_a or side_a.edited is not None):
        side_b = ModelSource.read(model_b)  # another model, or the file beside its edits
    same = side_b is side_a
    # Feeds are prepared once (preprocessing as in `onnxstudio run`), then shared.
    source, feeds = request_feeds(
        request, side_a.session(SessionConfig(optimization="disable"), cancel=cancel), side_a)
    pairs = ({n: n for n in (*node_outputs(proto_a.graph), *_io_names(proto_a))} if same
             else value_pairs(model_a, proto_a, side_b.path, side_b.proto))
    names = [n for n in node_outputs(proto_a.graph) if n in pairs]
    feeds_b = {pairs.get(k, k): v for k, v in feeds.items()}
    out_a, mid_a, warn_a = _side(side_a, feeds, a, names, cap_bytes, cancel)
    if cancel is not None:
        cancel.check()  # the reference evaluator cannot be stopped midway: not started
    out_b, mid_b, warn_b = _side(side_b, feeds_b, b, [pairs[n] for n in names], cap_bytes,
                                 cancel)
    producer = {o: i for i, n in enumerate(proto_a.graph.node) for o in n.output if o}
    outputs = [difference(n, out_a[n], out_b[pairs[n]], tolerance) for n in out_a
               if pairs.get(n) in out_b]
    for d in outputs:
        d.producer = producer.get(d.name)
    mids: list[Difference] = []
    for n in names:
        if n in mid_a and pairs[n] in mid_b:
            d = difference(n, mid_a[n], mid_b[pairs[n]], tolerance)
            d.producer = producer.get(n)
            mids.append(d)
    # A value nothing reads (Dropout's mask in inference, an unused optional output)
    # is filled arbitrarily by each engine: listed, but never "where it went wrong".
    read = {x for n in proto_a.graph.node for x in n.input} | \
        {o.name for o in proto_a.graph.output}
    first = None
    for d in mids:
        if d.exceeds and d.producer is not None and d.name in read:
            node = proto_a.graph.node[d.producer]
            first = Divergence(d.producer, node.name, node.op_type, d.name)
            break
    warnings = warn_a + [w for w in warn_b if w not in warn_a]
    if first is not None and "reference" in (a.engine, b.engine):
        first.known = known_deviation(proto_a, proto_a.graph.node[first.index],
                                      {**feeds, **mid_a})
        if first.known:
            warnings.insert(0, f"{first.op_type} '{first.name or first.id}': {first.known}")
    if not outputs:
        warnings.append("the two sides share no output name")
    dtypes = [str(np.asarray(v).dtype) for v in (*out_a.values(), *mid_a.values())]
    return Comparison(model_a, source, a, b, relative_for("float32", tolerance), outputs, mids,
                      first, warnings, describe(dtypes, tolerance))
