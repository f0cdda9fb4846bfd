"""Tensor -> something a person can read: top-k classes, images, maps, or shape/dtype/stats."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from onnxstudio.model.formatting import format_number
from onnxstudio.runner.labels import Labels
from onnxstudio.runner.output_kinds import OutputHints, tensor_kind
from onnxstudio.runner.preprocess import Preprocessed

LabelSource = Callable[[int], Labels | None]
TABLE_ROWS = 50
TABLE_COLS = 16
JSON_VALUES = 256  # outputs this small carry their values in `run --json`


@dataclass
class TopEntry:
    index: int
    label: str
    score: float


@dataclass
class OutputView:
    """One output, ready to display: kind is classification, image, embedding, hidden
    state, token logits, string, detections, mask, sequence, map or tensor (``kind_reason``
    says what evidence chose it)."""

    name: str
    kind: str
    dtype: str
    shape: list[int]
    summary: str = ""
    stats: dict[str, float] = field(default_factory=dict)
    top: list[TopEntry] = field(default_factory=list)
    softmax_applied: bool = False
    labels_source: str = ""
    image: np.ndarray | None = None  # uint8 (H, W, 3)
    values: list[float] | list[str] | None = None  # a small tensor, flattened, for --json
    table: list[list[str]] = field(default_factory=list)
    kind_reason: str = ""
    norm: float | None = None  # an embedding's L2 norm
    series: list[float] | None = None  # one value per audio window, plotted over time
    series_step_s: float = 0.0  # seconds between two values of the series

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {"name": self.name, "dtype": self.dtype, "shape": self.shape,
                                   "kind": self.kind, "kind_reason": self.kind_reason}
        if self.values is not None:
            data["values"] = self.values
        if self.norm is not None:
            data["norm"] = self.norm
        if self.kind == "token logits":
            data["next_token"] = [{"token": t.index, "score": t.score} for t in self.top]
        return data


def softmax(x: np.ndarray) -> np.ndarray:
    z = x.astype(np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()


def is_distribution(x: np.ndarray) -> bool:
    """Already probabilities: non-negative, at most 1, summing to 1 (to the dtype's precision:
    1000 fp16 probabilities add up to 1 only within about 1e-2)."""
    slack = 1e-2 if x.dtype == np.float16 else 1e-3
    return bool(x.size and x.min() >= 0.0 and x.max() <= 1.0 + slack
                and abs(float(x.astype(np.float64).sum()) - 1.0) < slack)


def class_vector(value: np.ndarray) -> np.ndarray | None:
    """A 1-D score vector if the output is one (e.g. [1, 1000] or [1, 1000, 1, 1])."""
    if value.dtype.kind != "f" or value.ndim == 0:
        return None
    big = [d for d in value.shape if d != 1]
    if len(big) != 1 or big[0] < 2:
        return None
    return value.reshape(-1)


def top_k(scores: np.ndarray, k: int, labels: Labels | None,
          probabilities: bool = False) -> tuple[list[TopEntry], bool]:
    """Top k entries; softmax only when the vector is not already a distribution (a Softmax
    node wrote it, or its values say so)."""
    applied = not (probabilities or is_distribution(scores))
    probs = softmax(scores) if applied else scores.astype(np.float64)
    order = np.argsort(-probs, kind="stable")[: max(1, k)]
    return [TopEntry(int(i), labels.name(int(i)) if labels else str(int(i)), float(probs[i]))
            for i in order], applied


def stats(value: np.ndarray) -> dict[str, float]:
    if value.size == 0 or value.dtype.kind not in "fiub":
        return {}
    v = value.astype(np.float64)
    finite = v[np.isfinite(v)]
    out = {"min": float(finite.min()), "max": float(finite.max()), "mean": float(finite.mean()),
           "std": float(finite.std())} if finite.size else {}
    if finite.size != v.size:
        out["non_finite"] = float(v.size - finite.size)
    return out


def value_table(value: np.ndarray) -> list[list[str]]:
    """The first rows and columns of the tensor as text (rank >2 folded onto the last axis)."""
    if value.ndim == 0:
        return [[format_number(value.item())]]
    flat = value.reshape(-1, value.shape[-1]) if value.ndim > 1 else value.reshape(-1, 1)
    return [[format_number(x) for x in row[:TABLE_COLS]] for row in flat[:TABLE_ROWS]]


def _image_axes(shape: Sequence[int]) -> str | None:
    """'chw' or 'hwc' when the shape is one image (batch 1), else None."""
    dims = list(shape)
    if len(dims) == 4:
        if dims[0] != 1:
            return None
        dims = dims[1:]
    if len(dims) != 3:
        return None
    if dims[0] in (1, 3) and min(dims[1:]) >= 8:
        return "chw"
    if dims[2] in (1, 3) and min(dims[:2]) >= 8:
        return "hwc"
    return None


def to_uint8(plane: np.ndarray) -> np.ndarray:
    """[0, 1] -> x255, [-1, 1] -> (x+1)x127.5, otherwise clipped to 0-255 (style transfer)."""
    v = plane.astype(np.float64)
    lo, hi = (float(np.nanmin(v)), float(np.nanmax(v))) if v.size else (0.0, 0.0)
    if lo >= -0.01 and hi <= 1.01:
        v = v * 255.0
    elif lo >= -1.01 and hi <= 1.01:
        v = (v + 1.0) * 127.5
    return np.clip(np.nan_to_num(v) + 0.5, 0, 255).astype(np.uint8)


def as_image(value: np.ndarray, pre: Preprocessed | None) -> np.ndarray | None:
    """An image-shaped output as RGB uint8; a 1-channel upscaled output is taken as the Y
    channel of a super-resolution model and recombined with the input's upscaled colour."""
    axes = _image_axes(value.shape)
    if axes is None:
        return None
    img = value.reshape(value.shape[-3:])
    if axes == "chw":
        img = img.transpose(1, 2, 0)
    pixels = to_uint8(img)
    h, w = pixels.shape[:2]
    if pixels.shape[2] == 1:
        y = pixels[:, :, 0]
        if pre is not None and pre.plan.channels == "gray" and h > pre.plan.size[0]:
            ycbcr = Image.fromarray(pre.resized_rgb).convert("YCbCr")
            _, cb, cr = (c.resize((w, h), Image.Resampling.BICUBIC) for c in ycbcr.split())
            merged = Image.merge("YCbCr", (Image.fromarray(y), cb, cr))
            return np.asarray(merged.convert("RGB"))
        return np.repeat(y[:, :, None], 3, axis=2)
    if pre is not None and pre.plan.channels == "bgr":
        pixels = pixels[:, :, ::-1]
    return np.ascontiguousarray(pixels)


def _map_table(m: Mapping[Any, Any]) -> list[list[str]]:
    return [[format_number(k), format_number(v)] for k, v in list(m.items())[:TABLE_ROWS]]


def interpret(outputs: Mapping[str, Any], labels_for: LabelSource | None = None,
              pre: Preprocessed | None = None, k: int = 5,
              hints: OutputHints | None = None) -> list[OutputView]:
    """Turn every output into an OutputView of the kind its evidence shows
    (``output_kinds``); classification vectors get top-k with labels, never soft-maxed
    again when a Softmax wrote them."""
    hints = hints or OutputHints()
    views: list[OutputView] = []
    for name, value in outputs.items():
        if isinstance(value, list):
            view = OutputView(name, "sequence", "sequence", [len(value)],
                              f"sequence of {len(value)} items",
                              kind_reason="a sequence value")
            if value and isinstance(value[0], dict):
                first: dict[Any, Any] = value[0]
                view.summary = f"sequence of {len(value)} maps ({len(first)} keys each)"
                view.table = [
                    [str(i), ", ".join(f"{format_number(a)}: {format_number(b)}"
                                       for a, b in m.items())]
                    for i, m in enumerate(value[:TABLE_ROWS])]
                keys = list(first.keys())
                scores = np.array([float(first[key]) for key in keys])
                order = np.argsort(-scores, kind="stable")[:k]
                view.top = [TopEntry(int(i), format_number(keys[i]), float(scores[i]))
                            for i in order]
                view.labels_source = "map keys"
                view.kind_reason = "a sequence of maps: class -> score (ZipMap)"
            else:
                view.table = [[str(i), format_number(v)] for i, v in enumerate(value[:TABLE_ROWS])]
            views.append(view)
            continue
        if isinstance(value, dict):
            view = OutputView(name, "map", "map", [len(value)], f"map of {len(value)} entries",
                              table=_map_table(value), kind_reason="a map value")
            views.append(view)
            continue
        views.append(_tensor_view(name, np.asarray(value), labels_for, pre, k, hints))
        continue
    return views


def _tensor_view(name: str, arr: np.ndarray, labels_for: LabelSource | None,
                 pre: Preprocessed | None, k: int, hints: OutputHints) -> OutputView:
    """One tensor output, drawn the way its kind reads."""
    view = OutputView(name, "tensor", str(arr.dtype), [int(d) for d in arr.shape],
                      stats=stats(arr), summary=f"{arr.dtype}{list(arr.shape)}")
    vec = class_vector(arr)
    labels = labels_for(vec.size) if labels_for and vec is not None else None
    image = as_image(arr, pre) if vec is None and arr.dtype.kind in "fiub" else None
    kind = tensor_kind(name, arr, hints, has_labels=labels is not None,
                       image_shaped=image is not None, fed_image=pre is not None)
    view.kind, view.kind_reason = kind.kind, kind.reason
    if kind.kind == "string":
        texts = [format_number(v) for v in arr.reshape(-1)]
        view.table = [[t] for t in texts[:TABLE_ROWS]]
        view.values = texts[:JSON_VALUES]
        shown = ", ".join(repr(t) for t in texts[:3]) + (" ..." if len(texts) > 3 else "")
        view.summary = f"{len(texts)} strings: {shown}"
        return view
    view.table = value_table(arr)
    if arr.dtype.kind in "fiub" and 0 < arr.size <= JSON_VALUES:
        view.values = [float(v) for v in arr.reshape(-1)]
    if kind.kind == "classification" and vec is not None:
        view.top, view.softmax_applied = top_k(vec, k, labels, name in hints.distributions)
        view.labels_source = labels.source if labels else "class indices"
    elif kind.kind == "image":
        view.image = image
    elif kind.kind == "embedding":
        view.norm = float(np.linalg.norm(arr.astype(np.float64)))
        view.summary += f", L2 norm {view.norm:.4g}"
    elif kind.kind == "hidden state":
        plane = arr[0].astype(np.float64)
        view.image = position_heatmap(plane)
        norms = np.linalg.norm(plane, axis=1)
        view.summary += (f", {plane.shape[0]} positions; per-position norm "
                         f"{norms.min():.3g}–{norms.max():.3g}")
    elif kind.kind == "token logits":
        last = arr[0, -1].astype(np.float64)
        view.top, view.softmax_applied = top_k(last, k, None)
        for entry in view.top:
            entry.label = f"token {entry.index}"
        view.labels_source = f"next token after position {arr.shape[1] - 1}, token ids"
    return view


def position_heatmap(plane: np.ndarray) -> np.ndarray:
    """A [positions, features] plane as RGB, one row per position: blue below zero, red
    above, white at zero, scaled by the largest magnitude; cells enlarged to be seen."""
    finite = np.nan_to_num(plane)
    peak = float(np.abs(finite).max()) or 1.0
    t = np.clip(finite / peak, -1.0, 1.0)
    white = 1.0 - np.abs(t)
    rgb = np.stack([np.where(t > 0, 1.0, white), white, np.where(t < 0, 1.0, white)], axis=-1)
    rows, cols = plane.shape
    tall, wide = max(1, 160 // max(rows, 1)), max(1, 320 // max(cols, 1))
    pixels = (rgb * 255 + 0.5).astype(np.uint8)
    return np.ascontiguousarray(np.repeat(np.repeat(pixels, tall, axis=0), wide, axis=1))
