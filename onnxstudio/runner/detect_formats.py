"""The output conventions of detectors and segmenters: recognise them from output shapes and
decode raw outputs into candidate boxes in the model input's pixels (before NMS)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from onnxstudio.runner.inputs import Dim, TensorSpec

FORMAT_NAMES = {
    "scores_boxes": "scores + boxes (corners)",
    "tf_od": "TensorFlow Object Detection (detection_boxes/scores/classes)",
    "ssd7": "SSD DetectionOutput [1, 1, N, 7]",
    "yolo_n5c": "YOLO [1, N, 5+C] (centre, size, objectness, classes)",
    "yolo_n4c": "YOLO [1, N, 4+C] (centre, size, classes)",
    "yolo_4cn": "YOLO [1, 4+C, N] (centre, size, classes)",
    "seg_scores": "per-pixel class scores [1, C, H, W]",
    "seg_map": "per-pixel class map",
}
_YOLO_MIN_ANCHORS = 500


def _int(d: Dim) -> int | None:
    return d if isinstance(d, int) and d > 0 else None


def _same(a: Dim, b: Dim) -> bool:
    """Equal sizes, or the same symbolic name (an unknown size matches nothing)."""
    return (_int(a) is not None and a == b) or (isinstance(a, str) and bool(a) and a == b)


def _input_hw(input_shape: Sequence[Dim]) -> list[tuple[Dim, Dim]]:
    """The (H, W) pairs an image input may have: NCHW or NHWC."""
    s = list(input_shape)
    if len(s) == 3:
        s = [1, *s]
    return [(s[2], s[3]), (s[1], s[2])] if len(s) == 4 else []


def _boxes_scores(rank3: list[TensorSpec]) -> tuple[TensorSpec, TensorSpec] | None:
    """Two rank-3 outputs [1, N, 4] and [1, N, C] sharing N: (boxes, scores)."""
    if len(rank3) != 2:
        return None
    a, b = rank3
    if not (_same(a.shape[1], b.shape[1]) or None in (_int(a.shape[1]), _int(b.shape[1]))):
        return None
    four = [o for o in rank3 if _int(o.shape[2]) == 4]
    if len(four) == 2:
        four = [o for o in rank3 if any(k in o.name.lower() for k in ("box", "loc"))]
    if len(four) != 1:
        return None
    boxes = four[0]
    scores = b if boxes is a else a
    return (boxes, scores) if (_int(scores.shape[2]) or 2) >= 1 else None


def _yolo(spec: TensorSpec) -> str:
    if len(spec.shape) != 3:
        return ""
    a, b = _int(spec.shape[1]) or 0, _int(spec.shape[2]) or 0
    if a >= 8 * b and a >= _YOLO_MIN_ANCHORS and b >= 6:
        return "yolo_n4c" if b == 84 else "yolo_n5c"
    if b >= 8 * a and b >= _YOLO_MIN_ANCHORS and a >= 5:
        return "yolo_4cn"
    return ""


def _segmentation(spec: TensorSpec, hw: list[tuple[Dim, Dim]]) -> str:
    s = spec.shape
    fits = any(len(s) >= 2 and _same(s[-2], h) and _same(s[-1], w) for h, w in hw)
    if not fits or spec.dtype is None:
        return ""
    if spec.dtype.startswith(("int", "uint")) and (len(s) == 3 or (len(s) == 4 and s[1] == 1)):
        return "seg_map"
    c = _int(s[1]) if len(s) == 4 else None
    if spec.dtype.startswith("float") and c is not None and c >= 2 and c != 3:
        return "seg_scores"
    return ""


def recognise(specs: Sequence[TensorSpec], input_shape: Sequence[Dim] | None) -> str:
    """The detector/segmenter convention these outputs follow, or "" (only for image inputs)."""
    if input_shape is None:
        return ""
    specs = [o for o in specs if o.is_tensor]
    lower = " ".join(o.name.lower() for o in specs)
    if "detection_boxes" in lower and "detection_scores" in lower:
        return "tf_od"
    if any(len(o.shape) == 4 and _int(o.shape[-1]) == 7 and _int(o.shape[1]) == 1
           for o in specs):
        return "ssd7"
    rank3 = [o for o in specs if len(o.shape) == 3 and _int(o.shape[0]) in (1, None)]
    if _boxes_scores(rank3):
        return "scores_boxes"
    if specs and (fmt := _yolo(specs[0])):
        return fmt
    hw = _input_hw(input_shape)
    return next((f for o in specs if (f := _segmentation(o, hw))), "")


@dataclass
class Candidates:
    """Boxes (x1, y1, x2, y2) in the model input's pixels, with score and class index."""

    boxes: np.ndarray  # (M, 4) float64
    scores: np.ndarray  # (M,)
    classes: np.ndarray  # (M,) int
    n_classes: int


def _corners(cxcywh: np.ndarray) -> np.ndarray:
    cx, cy, w, h = cxcywh.T
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)


def _to_pixels(boxes: np.ndarray, hw: tuple[int, int]) -> np.ndarray:
    """Normalised coordinates (all within about [-0.5, 1.5]) scaled to the input's pixels."""
    if boxes.size and float(np.abs(boxes).max()) <= 1.5:
        return boxes * np.array([hw[1], hw[0], hw[1], hw[0]], dtype=np.float64)
    return boxes


def _is_softmax(scores: np.ndarray) -> bool:
    return bool(scores.min() >= 0 and np.allclose(scores.sum(axis=1), 1.0, atol=1e-2))


def _decode_scores_boxes(outputs: Mapping[str, np.ndarray], hw: tuple[int, int]) -> Candidates:
    specs = [TensorSpec(n, "tensor", str(v.dtype), tuple(v.shape)) for n, v in outputs.items()
             if isinstance(v, np.ndarray) and v.ndim == 3]
    pair = _boxes_scores(specs)
    assert pair is not None
    boxes = outputs[pair[0].name][0].astype(np.float64)
    scores = outputs[pair[1].name][0].astype(np.float64)
    n_classes = scores.shape[1]
    if n_classes >= 2 and _is_softmax(scores):  # column 0 is the background
        cls = scores[:, 1:].argmax(axis=1) + 1
    else:
        cls = scores.argmax(axis=1)
    return Candidates(_to_pixels(boxes, hw), scores[np.arange(len(cls)), cls], cls, n_classes)


def _decode_tf_od(outputs: Mapping[str, np.ndarray], hw: tuple[int, int]) -> Candidates:
    def find(key: str) -> np.ndarray | None:
        return next((np.asarray(v) for n, v in outputs.items() if key in n.lower()), None)

    boxes, scores = find("detection_boxes"), find("detection_scores")
    assert boxes is not None and scores is not None
    classes, count = find("detection_classes"), find("num_detections")
    n = int(count.reshape(-1)[0]) if count is not None else boxes.shape[1]
    yx = boxes[0, :n].astype(np.float64)
    cls = (classes[0, :n] if classes is not None else np.zeros(n)).astype(np.int64)
    return Candidates(_to_pixels(yx[:, [1, 0, 3, 2]], hw), scores[0, :n].astype(np.float64),
                      cls, int(cls.max()) + 1 if cls.size else 1)


def _decode_ssd7(outputs: Mapping[str, np.ndarray], hw: tuple[int, int]) -> Candidates:
    arr = next(np.asarray(v) for v in outputs.values()
               if isinstance(v, np.ndarray) and v.ndim == 4 and v.shape[-1] == 7)
    rows = arr.reshape(-1, 7).astype(np.float64)
    rows = rows[rows[:, 0] >= 0]  # image id -1 ends the list
    cls = rows[:, 1].astype(np.int64)
    return Candidates(_to_pixels(rows[:, 3:7], hw), rows[:, 2], cls,
                      int(cls.max()) + 1 if cls.size else 1)


def _decode_yolo(fmt: str, value: np.ndarray, hw: tuple[int, int]) -> Candidates:
    rows = value[0].astype(np.float64)
    if fmt == "yolo_4cn":
        rows = rows.T
    first = 5 if fmt == "yolo_n5c" else 4
    cls_scores = rows[:, first:]
    if fmt == "yolo_n5c":
        cls_scores = cls_scores * rows[:, 4:5]
    cls = cls_scores.argmax(axis=1)
    boxes = _to_pixels(_corners(rows[:, :4]), hw)
    return Candidates(boxes, cls_scores[np.arange(len(cls)), cls], cls, cls_scores.shape[1])


def decode(fmt: str, outputs: Mapping[str, np.ndarray], hw: tuple[int, int]) -> Candidates:
    """Candidate boxes of a recognised detector format (see ``recognise``)."""
    if fmt == "scores_boxes":
        return _decode_scores_boxes(outputs, hw)
    if fmt == "tf_od":
        return _decode_tf_od(outputs, hw)
    if fmt == "ssd7":
        return _decode_ssd7(outputs, hw)
    first = next(np.asarray(v) for v in outputs.values() if isinstance(v, np.ndarray))
    return _decode_yolo(fmt, first, hw)
