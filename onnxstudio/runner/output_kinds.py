"""What each output is — image, classification, embedding, hidden state, token logits,
string... — decided from evidence (shape, dtype, name, the op that wrote it, what the model
reads), with the reason shown beside it. ``evidence.py`` decides how to feed a model; this
decides how to read what comes out. Detections and masks are named by the pipeline, whose
detector formats (``detect_formats``) already recognised them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import onnx

    from onnxstudio.runner.inputs import ModelInfo

# Ops that only move or relabel values: the op that wrote an output is found past them.
_PASS_THROUGH = {"Identity", "Cast", "Reshape", "Squeeze", "Unsqueeze", "Flatten",
                 "Transpose", "Expand", "CastLike"}
_NORMALISERS = {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                "RMSNormalization", "SkipSimplifiedLayerNormalization"}
_EMBEDDING = re.compile(r"embed|pool|feature|vector|sentence|hidden|encod", re.IGNORECASE)
_CLASSES = re.compile(r"logit|prob|class|score|pred|label|softmax", re.IGNORECASE)
_LOGITS = re.compile(r"logit", re.IGNORECASE)
VOCABULARY = 10000  # a last axis this long after a MatMul reads as a vocabulary


@dataclass(frozen=True)
class OutputHints:
    """What the model file says about its outputs, gathered once per model."""

    producers: Mapping[str, str] = field(default_factory=dict)  # output -> op that wrote it
    distributions: frozenset[str] = frozenset()  # outputs a Softmax writes
    token_inputs: bool = False  # it reads integer [batch, sequence] ids: a text model
    image_inputs: bool = False  # it reads a [batch, 1 or 3, H, W] (or NHWC) picture


def writers(proto: onnx.ModelProto) -> dict[str, str]:
    """Output name -> op type of the node that computed it, past reshapes and casts."""
    producer = {o: n for n in proto.graph.node for o in n.output if o}
    found: dict[str, str] = {}
    for out in proto.graph.output:
        node, steps = producer.get(out.name), 0
        while node is not None and node.op_type in _PASS_THROUGH and node.input and steps < 8:
            node, steps = producer.get(node.input[0]), steps + 1
        if node is not None:
            found[out.name] = node.op_type
    return found


def hints(info: ModelInfo) -> OutputHints:
    tokens = any(s.is_tensor and s.dtype in ("int64", "int32") and len(s.shape) == 2
                 for s in info.inputs)
    images = any(s.is_tensor and len(s.shape) == 4 and (s.shape[1] in (1, 3) or
                                                       s.shape[3] in (1, 3))
                 for s in info.inputs)
    return OutputHints(info.producers, info.distributions, tokens, images)


@dataclass(frozen=True)
class Kind:
    kind: str
    reason: str


def tensor_kind(name: str, arr: np.ndarray, hints: OutputHints, *, has_labels: bool,
                image_shaped: bool, fed_image: bool) -> Kind:
    """The kind of one tensor output and why (classification, embedding, hidden state,
    token logits, image, string or tensor)."""
    op = hints.producers.get(name, "")
    by = f" (written by {op})" if op else ""
    if arr.dtype.kind in "OUS":
        return Kind("string", f"string values{by}")
    if arr.dtype.kind != "f":
        return Kind("tensor", f"{arr.dtype} values{by}")
    big = [d for d in arr.shape if d != 1]
    if arr.ndim == 3 and arr.shape[0] == 1 and arr.shape[1] > 1 and \
            (hints.token_inputs or not (fed_image or hints.image_inputs)):
        if _LOGITS.search(name) or (arr.shape[2] >= VOCABULARY and op not in _NORMALISERS):
            why = "named logits" if _LOGITS.search(name) else f"{arr.shape[2]} scores per position"
            return Kind("token logits", f"{why}{by}: one score per vocabulary entry and position")
        what = "a text model's " if hints.token_inputs else ""
        return Kind("hidden state", f"[batch, positions, {arr.shape[2]}]: {what}vector per "
                                    f"position{by}")
    if len(big) == 1 and big[0] >= 2:
        size = big[0]
        if name in hints.distributions or op == "Softmax":
            return Kind("classification", f"probabilities over {size} classes{by}")
        if has_labels:
            return Kind("classification", f"{size} scores with labels for {size} classes{by}")
        if _EMBEDDING.search(name):
            return Kind("embedding", f"{size} values named like an embedding{by}")
        if _CLASSES.search(name):
            return Kind("classification", f"{size} scores named like classes{by}")
        if hints.token_inputs:
            return Kind("embedding", f"{size} values from a text model{by}")
        norm = float(np.linalg.norm(arr.astype(np.float64)))
        if abs(norm - 1.0) < 1e-3:
            return Kind("embedding", f"{size} values of unit length{by}")
        if op in ("Tanh", "LpNormalization") or op in _NORMALISERS:
            return Kind("embedding", f"{size} values{by}, not scores")
        return Kind("classification", f"one score vector of {size}{by}, no labels")
    if image_shaped:
        return Kind("image", f"image-shaped {list(arr.shape)}{by}")
    return Kind("tensor", f"no evidence of a readable kind for {list(arr.shape)}{by}")
