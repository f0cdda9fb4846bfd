"""Detector and segmenter outputs -> what they mean: boxes after NMS and class masks, in the
ORIGINAL image's pixels (the preprocessing geometry is undone)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from onnxstudio.runner.detect_formats import FORMAT_NAMES, decode, recognise
from onnxstudio.runner.inputs import TensorSpec
from onnxstudio.runner.labels import Labels
from onnxstudio.runner.preprocess import Preprocessed

DEFAULT_THRESHOLD = 0.5
DEFAULT_IOU = 0.45
CANDIDATE_FLOOR = 0.05  # boxes below this score are never shown, whatever the threshold
MAX_CANDIDATES = 1000


@dataclass(frozen=True)
class Detection:
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in the original image's pixels
    score: float
    label: str
    index: int

    def as_json(self) -> dict[str, Any]:
        return {"box": [round(v, 2) for v in self.box], "score": round(self.score, 6),
                "label": self.label}


@dataclass
class Detections:
    """Every candidate after NMS, best first; ``above`` filters by a threshold (NMS is greedy
    by score, so filtering its result equals running it on the filtered boxes)."""

    format: str
    candidates: list[Detection]
    threshold: float = DEFAULT_THRESHOLD
    iou: float = DEFAULT_IOU

    @property
    def description(self) -> str:
        return FORMAT_NAMES.get(self.format, self.format)

    def above(self, threshold: float | None = None) -> list[Detection]:
        t = self.threshold if threshold is None else threshold
        return [d for d in self.candidates if d.score >= t]


@dataclass
class Segmentation:
    """Class per original pixel (-1 where the model saw nothing) and the classes found."""

    format: str
    classes: np.ndarray  # (H, W) int32
    labels: list[str]
    areas: list[tuple[int, str, float]] = field(default_factory=list)  # index, label, fraction

    @property
    def description(self) -> str:
        return FORMAT_NAMES.get(self.format, self.format)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression: indices kept, best score first."""
    order = np.argsort(-scores, kind="stable")
    x1, y1, x2, y2 = boxes.T
    area = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        w = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        union = area[i] + area[rest] - inter
        overlap = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        order = rest[overlap <= iou]
    return keep


def _label(labels: Labels | None, index: int, n_classes: int) -> str:
    if labels is not None:
        return labels.name(index)
    if n_classes == 2 and index == 1:
        return "object"
    return f"class {index}"


def detect(fmt: str, outputs: Mapping[str, Any], pre: Preprocessed,
           labels_for: Callable[[int], Labels | None] | None = None,
           threshold: float = DEFAULT_THRESHOLD, iou: float = DEFAULT_IOU) -> Detections:
    """Decode, suppress per class and map back to the original image."""
    arrays = {n: np.asarray(v) for n, v in outputs.items() if isinstance(v, np.ndarray)}
    cand = decode(fmt, arrays, pre.plan.size)
    labels = labels_for(cand.n_classes) if labels_for else None
    ok = np.isfinite(cand.scores) & (cand.scores >= min(CANDIDATE_FLOOR, threshold))
    idx = np.flatnonzero(ok)
    idx = idx[np.argsort(-cand.scores[idx], kind="stable")][:MAX_CANDIDATES]
    kept: list[int] = []
    for c in np.unique(cand.classes[idx]):
        members = idx[cand.classes[idx] == c]
        kept += [int(members[k]) for k in nms(cand.boxes[members], cand.scores[members], iou)]
    kept.sort(key=lambda i: -float(cand.scores[i]))
    geometry = pre.geometry
    boxes = geometry.to_original(cand.boxes[kept]) if geometry else cand.boxes[kept]
    found = [Detection(tuple(float(v) for v in box),  # type: ignore[arg-type]
                       float(cand.scores[i]), _label(labels, int(cand.classes[i]),
                                                     cand.n_classes), int(cand.classes[i]))
             for i, box in zip(kept, boxes, strict=True)]
    return Detections(fmt, found, threshold, iou)


def segment(fmt: str, outputs: Mapping[str, Any], pre: Preprocessed,
            labels_for: Callable[[int], Labels | None] | None = None) -> Segmentation | None:
    """The per-pixel class map, resampled onto the original image."""
    hw = [(pre.plan.size[0], pre.plan.size[1])]
    for name, value in outputs.items():
        if not isinstance(value, np.ndarray):
            continue
        spec = TensorSpec(name, "tensor", str(value.dtype), tuple(value.shape))
        if recognise([spec], (1, 3, *hw[0])) != fmt:
            continue
        if fmt == "seg_scores":
            plane = value[0].argmax(axis=0)
            n = value.shape[1]
        else:
            plane = value.reshape(value.shape[-2:]).astype(np.int64)
            n = int(plane.max()) + 1
        labels = labels_for(n) if labels_for else None
        names = [labels.name(i) if labels else f"class {i}" for i in range(n)]
        classes = pre.geometry.sample(plane) if pre.geometry else plane.astype(np.int32)
        seen = classes[classes >= 0]
        counts = np.bincount(seen, minlength=n) if seen.size else np.zeros(n, int)
        areas = [(i, names[i], float(counts[i]) / max(1, seen.size))
                 for i in np.argsort(-counts) if counts[i] > 0]
        return Segmentation(fmt, classes, names, areas)
    return None
