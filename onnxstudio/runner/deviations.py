"""Where onnx's reference evaluator is known to differ from onnxruntime, so a comparison
against it can say "the reference is the odd one out here" rather than blame the model.

Each entry was checked on a real case (onnx 1.23, onnxruntime 1.32; tests in
tests/test_reference_deviations.py):

- Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D at ``axis``
  (default 1) and normalise over everything after it; the reference evaluator applies
  opset 13's meaning (one axis) to every version. On a >2-D input whose axis is not the
  last, the values differ (Softmax-11 on [2,3,4,5], axis 1: max |Δ| 0.6).
- Operators onnx dropped from the standard but onnxruntime still runs (ImageScaler, Scale,
  Crop, ScaledTanh, Affine, ParametricSoftplus: Caffe2-era converters wrote them) have no
  schema in onnx, so the reference evaluator cannot run a model holding one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx

_AXIS_COERCING = ("Softmax", "LogSoftmax", "Hardmax")
DROPPED_OPS = ("ImageScaler", "Scale", "Crop", "ScaledTanh", "Affine", "ParametricSoftplus")
_NO_SCHEMA = re.compile(r"No registered schema for operator '(\w+)'")


def _opset(model: onnx.ModelProto, domain: str) -> int:
    names = ("", "ai.onnx") if domain in ("", "ai.onnx") else (domain,)
    return next((int(o.version) for o in model.opset_import if o.domain in names), 0)


def known_deviation(model: onnx.ModelProto, node: onnx.NodeProto,
                    values: Mapping[str, Any]) -> str:
    """Why the reference evaluator's value for ``node`` is known to differ from
    onnxruntime's ("" when no known deviation applies); ``values``: the run's values by
    name (the node's input among them gives its rank)."""
    if node.op_type not in _AXIS_COERCING or node.domain not in ("", "ai.onnx"):
        return ""
    version = _opset(model, node.domain)
    first = values.get(node.input[0]) if node.input else None
    rank = int(np.ndim(first)) if first is not None else 0
    if version >= 13 or rank <= 2:
        return ""
    axis = next((int(a.i) for a in node.attribute if a.name == "axis"), 1)
    if axis % rank == rank - 1:
        return ""
    return (f"a known deviation of onnx's reference evaluator: {node.op_type}-{version} "
            f"flattens its {rank}-D input to 2-D at axis {axis} (as onnxruntime does); the "
            f"reference applies opset 13's one-axis {node.op_type} to every version")


def missing_operator(text: str) -> str:
    """The operator a reference-evaluator failure says it has no schema for, or ""."""
    m = _NO_SCHEMA.search(text)
    return m.group(1) if m else ""


def missing_text(op: str) -> str:
    """Why the reference evaluator cannot run a model holding ``op``."""
    dropped = (" (onnx dropped this experimental operator; onnxruntime still runs it)"
               if op in DROPPED_OPS else "")
    return (f"onnx's reference evaluator has no {op}{dropped}, a known gap: compare two "
            "onnxruntime configurations instead")
