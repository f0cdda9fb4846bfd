"""What a model file says about how it was trained: its output family (classifier, detector,
segmenter) and its producer and era. Preprocessing uses this where metadata is silent."""

from __future__ import annotations

from dataclasses import dataclass

from onnxstudio.runner.detect_formats import recognise
from onnxstudio.runner.inputs import ModelInfo, TensorSpec


@dataclass(frozen=True)
class Evidence:
    """Defaults suggested by the model file, with the reason shown to the user.

    ``strong`` is False when the evidence is a convention that often fails (a framework's
    usual range); the panel then offers ``alternatives`` side by side.
    """

    family: str = "classifier"  # classifier, detector, segmenter, image-to-image
    detector_format: str = ""  # see detect_formats.recognise
    preset: str | None = None
    resize: str | None = None
    layout: str | None = None
    reason: str = ""
    strong: bool = False
    alternatives: tuple[str, ...] = ()
    threshold: float | None = None  # the detector family's usual lowest score


_WEAK_DEFAULT = ("imagenet", "unit", "caffe")
# The score the family's own demos keep (Ultra-Light face detectors 0.7, Ultralytics 0.25).
_THRESHOLDS = {"face": 0.7, "yolo_n5c": 0.25, "yolo_n4c": 0.25, "yolo_4cn": 0.25}


def _family_defaults(fmt: str, outputs: list[TensorSpec]) -> tuple[str, str, str, bool]:
    """(preset, resize, reason, strong) for a detector or segmenter output convention."""
    if fmt == "scores_boxes":
        scores = next(o for o in outputs if o.shape and o.shape[-1] != 4)
        if scores.shape[-1] == 2:  # background + one class: the Ultra-Light face detectors
            return ("centred128", "stretch",
                    "a face detector (scores [1, N, 2] + boxes), Ultra-Light convention", True)
        return "symmetric", "stretch", "an SSD-style detector (scores + boxes)", False
    if fmt == "tf_od":
        return "unit", "stretch", "a TensorFlow Object Detection API model", False
    if fmt == "ssd7":
        return "caffe", "stretch", "a Caffe SSD detector ([1, 1, N, 7])", False
    if fmt.startswith("yolo"):
        return "unit", "letterbox", "a YOLO-style detector", True
    return ("imagenet", "stretch", "a segmenter (per-pixel class scores, torchvision "
            "convention)", False)


# Producer name fragment -> (preset, layout, what it is, the likely presets side by side).
_PRODUCERS: list[tuple[tuple[str, ...], str, str | None, str, tuple[str, ...]]] = [
    (("caffe",), "caffe", None, "a Caffe/Caffe2 export", ("caffe", "bgr255", "imagenet")),
    (("keras", "tf2onnx", "tensorflow", "tflite"), "symmetric", "nhwc",
     "a Keras/TensorFlow export", ("symmetric", "caffe", "unit")),
    (("torch",), "imagenet", None, "torchvision convention", ("imagenet", "unit", "raw255")),
    (("paddle",), "imagenet", None, "PaddlePaddle convention",
     ("imagenet", "symmetric", "unit")),
    (("cntk",), "unit", None, "CNTK convention", ("unit", "raw255", "imagenet")),
]


def _producer_defaults(info: ModelInfo) -> tuple[str | None, str | None, str, bool,
                                                  tuple[str, ...]]:
    """(preset, layout, reason, strong, alternatives) from the producer name and era."""
    prod = (info.producer or "").lower()
    who = f"producer {info.producer!r}" + (f" {info.producer_version}"
                                            if info.producer_version else "")
    for keys, preset, layout, what, alternatives in _PRODUCERS:
        if any(k in prod for k in keys):
            return preset, layout, f"{who}: {what}", False, alternatives
    return None, None, "", False, _WEAK_DEFAULT


def gather(info: ModelInfo, image_spec: TensorSpec | None, *,
           image_to_image: bool = False) -> Evidence:
    """The model's own evidence, strongest first: output family, then producer and era."""
    fmt = recognise(info.outputs, image_spec.shape if image_spec is not None else None)
    if image_to_image and not fmt:
        return Evidence("image-to-image")
    p_preset, p_layout, p_reason, p_strong, p_alts = _producer_defaults(info)
    if fmt:
        preset, resize, reason, strong = _family_defaults(fmt, info.outputs)
        family = "segmenter" if fmt.startswith("seg") else "detector"
        alts = tuple(dict.fromkeys((preset, *p_alts)))[:3]
        return Evidence(family, fmt, preset, resize, p_layout, reason, strong, alts,
                        _THRESHOLDS.get("face" if preset == "centred128" else fmt))
    return Evidence("classifier", "", p_preset, None, p_layout, p_reason, p_strong, p_alts)


def image_to_image(outputs: list[TensorSpec]) -> bool:
    """An output shaped like an image (1 or 3 channels, spatial dims not 1): style transfer,
    super-resolution, ... these take 0-255 (colour) or 0-1 (grey) pixels by default."""
    for o in outputs:
        if o.is_tensor and len(o.shape) == 4:
            c1, c3 = o.shape[1], o.shape[3]
            if c1 in (1, 3) and all(d != 1 for d in o.shape[2:]):
                return True
            if c3 in (1, 3) and all(d != 1 for d in o.shape[1:3]) and c1 not in (1, 3):
                return True
    return False
