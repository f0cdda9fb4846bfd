"""Image -> tensor. Decided in order: model metadata, the input's shape and dtype, the user
(or the choice remembered for this model), the model's evidence (family, producer), a default.

Every number is computed per channel from a 256-entry table in float64 and cast once, so a
preset gives exactly the value its formula says (e.g. imagenet: (x/255 - mean) / std).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from onnxstudio.errors import InputError
from onnxstudio.runner.evidence import Evidence
from onnxstudio.runner.geometry import RESIZES, Geometry, geometry_of, resize_image
from onnxstudio.runner.inputs import TensorSpec

__all__ = [
    "PRESETS",
    "RESIZES",
    "PreprocessOptions",
    "PreprocessPlan",
    "Preprocessed",
    "apply",
    "image_input",
    "plan",
    "preprocess",
    "resize_image",
]


@dataclass(frozen=True)
class Preset:
    channels: str  # "rgb" or "bgr" (grey models take luminance whatever the preset)
    divisor: float  # pixel / divisor, then minus mean, divided by std
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


PRESETS: dict[str, Preset] = {
    "imagenet": Preset("rgb", 255.0, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "caffe": Preset("bgr", 1.0, (103.939, 116.779, 123.68), (1.0, 1.0, 1.0)),
    "raw255": Preset("rgb", 1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "unit": Preset("rgb", 255.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "symmetric": Preset("rgb", 127.5, (1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
    "bgr255": Preset("bgr", 1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "centred128": Preset("rgb", 1.0, (127.0, 127.0, 127.0), (128.0, 128.0, 128.0)),
}
# What each preset computes, for menus and reasons.
PRESET_FORMULAS = {
    "imagenet": "RGB, (x/255 − ImageNet mean) / std",
    "caffe": "BGR, x − Caffe mean (103.9, 116.8, 123.7)",
    "raw255": "RGB, 0–255",
    "unit": "RGB, x/255",
    "symmetric": "RGB, x/127.5 − 1",
    "bgr255": "BGR, 0–255",
    "centred128": "RGB, (x − 127) / 128",
}
CHANNELS = ("rgb", "bgr", "gray")
LAYOUTS = ("nchw", "nhwc")
DEFAULT_SIZE = (224, 224)

# The Windows ML / onnxmltools image metadata convention.
_PIXEL_FORMATS = {"Rgb8": "rgb", "Rgba8": "rgb", "Bgr8": "bgr", "Bgra8": "bgr", "Gray8": "gray"}
_PIXEL_RANGES = {"NominalRange_0_255": "raw255", "Normalized_0_1": "unit",
                 "Normalized_1_1": "symmetric", "NominalRange_16_235": "raw255"}


@dataclass
class PreprocessOptions:
    """The user's choices; None means "decide from the model"."""

    preset: str | None = None
    channels: str | None = None
    layout: str | None = None
    size: tuple[int, int] | None = None  # (height, width)
    resize: str | None = None
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    scale: float | None = None  # multiplier; x * scale replaces x / divisor
    source: str = ""  # why the preset was chosen when not just now ("remembered for this model")


@dataclass
class PreprocessPlan:
    """Everything that was decided, and why (the reasons are shown to the user)."""

    input_name: str
    preset: str
    channels: str
    layout: str
    size: tuple[int, int]
    resize: str
    mean: tuple[float, ...]
    std: tuple[float, ...]
    divisor: float
    dtype: str
    rank: int = 4
    n_channels: int = 3
    reasons: list[str] = field(default_factory=list)
    # Presets worth trying side by side: set when the preset is a guess (weak evidence).
    alternatives: tuple[str, ...] = ()

    @property
    def scale(self) -> float:
        return 1.0 / self.divisor

    def as_json(self) -> dict[str, object]:
        return {"preset": self.preset, "channels": self.channels, "layout": self.layout,
                "size": [self.size[0], self.size[1]], "resize": self.resize,
                "mean": list(self.mean), "std": list(self.std), "scale": self.scale,
                "dtype": self.dtype}


@dataclass
class Preprocessed:
    tensor: np.ndarray
    plan: PreprocessPlan
    preview: np.ndarray  # what the model sees, as uint8 (H, W, 3) or (H, W)
    resized_rgb: np.ndarray  # the same geometry in colour (super-resolution recombines it)
    geometry: Geometry | None = None  # input pixels <-> the original image's
    original: np.ndarray | None = None  # the decoded image (boxes and masks are drawn on it)

    @property
    def description(self) -> str:
        t = self.tensor
        lo, hi = (float(t.min()), float(t.max())) if t.size else (0.0, 0.0)
        head = (f"{self.plan.input_name}: {t.dtype}{list(t.shape)} range [{lo:.4g}, {hi:.4g}]"
                f" — {self.plan.preset}, {self.plan.channels.upper()}, "
                f"{self.plan.layout.upper()}, {self.plan.size[0]}x{self.plan.size[1]} "
                f"{self.plan.resize}")
        return "\n".join([head, *self.plan.reasons])


def image_input(inputs: list[TensorSpec]) -> TensorSpec | None:
    """The input an image should go to: the first rank-3/4 tensor whose channel axis (after
    the batch axis, or last) can hold 1 or 3 channels."""
    for spec in inputs:
        if not spec.is_tensor or len(spec.shape) not in (3, 4) or spec.dtype == "object":
            continue
        lead = spec.shape[1] if len(spec.shape) == 4 else spec.shape[0]
        if any(_fixed(d) in (None, 1, 3) for d in (lead, spec.shape[-1])):
            return spec
    return None


def _fixed(d: object) -> int | None:
    return d if isinstance(d, int) and d > 0 else None


@dataclass
class _Axes:
    rank: int
    lead: int  # index of the first non-batch axis
    ch_axis: int
    hw_axes: tuple[int, int]
    n_ch: int | None  # fixed channel count, None when symbolic


def _check_image_spec(spec: TensorSpec) -> str:
    if len(spec.shape) not in (3, 4):
        raise InputError(f"input {spec.name!r} ({spec.describe()}) is not image-shaped "
                         "(rank 3 or 4 expected)")
    dtype = spec.dtype or "float32"
    if dtype not in ("float32", "float16", "float64", "uint8"):
        raise InputError(f"input {spec.name!r} has dtype {dtype}; images feed float or uint8")
    return dtype


def _decide_layout(spec: TensorSpec, opts: PreprocessOptions, ev: Evidence | None,
                   why: list[str]) -> _Axes:
    """Denotations, then which axis has 1 or 3 entries, then the user, the producer, NCHW."""
    rank = len(spec.shape)
    lead = 1 if rank == 4 else 0
    layout: str | None = None
    if "DATA_CHANNEL" in spec.denotations:
        axis = spec.denotations.index("DATA_CHANNEL")
        layout = "nchw" if axis == lead else "nhwc" if axis == rank - 1 else None
        if layout:
            why.append(f"layout {layout.upper()}: dimension denotation DATA_CHANNEL")
    if layout is None:
        first, last = _fixed(spec.shape[lead]), _fixed(spec.shape[-1])
        if first in (1, 3) and (last not in (1, 3) or (first == 3 and last == 1)):
            layout = "nchw"
        elif last in (1, 3) and (first not in (1, 3) or (last == 3 and first == 1)):
            layout = "nhwc"  # [1, H, W, 3]: a 3-channel image beats a 1-channel one 3 wide
        if layout:
            why.append(f"layout {layout.upper()}: from the input shape")
    if layout is None:
        if opts.layout in LAYOUTS:
            layout = opts.layout
            why.append(f"layout {layout.upper()}: your choice")
        elif ev is not None and ev.layout in LAYOUTS:
            layout = ev.layout
            why.append(f"layout {layout.upper()}: {ev.reason}")
        else:
            layout = "nchw"
            why.append("layout NCHW: default")
    elif opts.layout and opts.layout != layout:
        why.append(f"(your layout {opts.layout.upper()} does not fit this input)")
    ch_axis = lead if layout == "nchw" else rank - 1
    hw = (ch_axis + 1, ch_axis + 2) if layout == "nchw" else (ch_axis - 2, ch_axis - 1)
    n_ch = _fixed(spec.shape[ch_axis])
    if n_ch not in (None, 1, 3):
        raise InputError(f"input {spec.name!r} ({spec.describe()}) has {n_ch} channels; "
                         "an image has 1 or 3")
    return _Axes(rank, lead, ch_axis, hw, n_ch)


def _decide_preset(dtype: str, meta: Mapping[str, str], opts: PreprocessOptions,
                   ev: Evidence | None, n_ch: int | None, image_to_image: bool,
                   why: list[str]) -> tuple[str, str]:
    """(preset, who decided: model, user, evidence or default): metadata range, the dtype,
    the user, the model's evidence, then a guess."""
    preset: str | None = None
    meta_range = meta.get("Image.NominalPixelRange")
    if meta_range in _PIXEL_RANGES:
        preset = _PIXEL_RANGES[meta_range]
        why.append(f"preset {preset}: model metadata Image.NominalPixelRange={meta_range}")
    elif dtype == "uint8":
        preset = "raw255"
        why.append("preset raw255: the input is uint8 (raw pixels)")
    if preset is not None:
        if opts.preset and opts.preset != preset:
            why.append(f"(your preset {opts.preset} is overridden by the model)")
        return preset, "model"
    if opts.preset:
        if opts.preset not in PRESETS:
            raise InputError(f"unknown preset {opts.preset!r} (choose from {', '.join(PRESETS)})")
        why.append(f"preset {opts.preset} ({PRESET_FORMULAS[opts.preset]}): "
                   f"{opts.source or 'your choice'}")
        return opts.preset, "user"
    if ev is not None and ev.preset in PRESETS and n_ch != 1:
        why.append(f"preset {ev.preset} ({PRESET_FORMULAS[ev.preset]}): {ev.reason}"
                   + ("" if ev.strong else " — a guess, try the alternatives"))
        return ev.preset, "evidence"
    preset = ("unit" if n_ch == 1 else "raw255") if image_to_image else \
        ("unit" if n_ch == 1 else "imagenet")
    why.append(f"preset {preset}: default for "
               + ("an image-to-image model" if image_to_image else "a classifier"))
    return preset, "default"


def _decide_channels(meta: Mapping[str, str], opts: PreprocessOptions, n_ch: int | None,
                     preset: Preset, why: list[str]) -> tuple[str, int]:
    """Metadata pixel format, then the channel count, then the user, then the preset."""
    channels: str | None = None
    fmt = meta.get("Image.BitmapPixelFormat")
    if fmt in _PIXEL_FORMATS:
        channels = _PIXEL_FORMATS[fmt]
        why.append(f"channels {channels.upper()}: model metadata Image.BitmapPixelFormat={fmt}")
    elif n_ch == 1:
        channels = "gray"
        why.append("channels GRAY (luminance): the input has 1 channel")
    if channels is None:
        if opts.channels in CHANNELS:
            channels = opts.channels
            why.append(f"channels {channels.upper()}: your choice"
                       + (" (luminance in all 3 channels)" if channels == "gray" else ""))
        else:
            channels = preset.channels
    n_channels = n_ch or (1 if channels == "gray" and fmt in _PIXEL_FORMATS else 3)
    if n_channels == 1 and channels != "gray":
        channels = "gray"
        why.append("channels GRAY (luminance): the input has 1 channel")
    return channels, n_channels


def _decide_geometry(spec: TensorSpec, axes: _Axes, opts: PreprocessOptions,
                     ev: Evidence | None, why: list[str]) -> tuple[tuple[int, int], str]:
    """Fixed dims, then the user, then the default for symbolic H/W; resize: user, family."""
    h, w = _fixed(spec.shape[axes.hw_axes[0]]), _fixed(spec.shape[axes.hw_axes[1]])
    if h and w:
        size = (h, w)
        if opts.size and tuple(opts.size) != size:
            why.append(f"(your size {opts.size[0]}x{opts.size[1]} does not fit this input)")
    else:
        uh, uw = opts.size or (None, None)
        size = (h or uh or DEFAULT_SIZE[0], w or uw or DEFAULT_SIZE[1])
        why.append(f"size {size[0]}x{size[1]}: " + ("your choice" if opts.size else
                   "default for a symbolic size"))
    if opts.resize:
        resize = opts.resize
    elif ev is not None and ev.resize:
        resize = ev.resize
        why.append(f"resize {resize}: {ev.reason}")  # the family's own convention
    else:
        resize = "crop"
    if resize not in RESIZES:
        raise InputError(f"unknown resize mode {resize!r} (choose from {', '.join(RESIZES)})")
    return size, resize


def _decide_values(dtype: str, pre: Preset, n_channels: int, opts: PreprocessOptions,
                   why: list[str]) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """(mean, std, divisor): the preset's, with the user's overrides; uint8 takes raw pixels."""
    mean: tuple[float, ...] = pre.mean
    std: tuple[float, ...] = pre.std
    if n_channels == 1:  # one channel: the average of the preset's per-channel values
        mean, std = (float(np.mean(mean)),), (float(np.mean(std)),)
    divisor = pre.divisor
    if opts.mean is not None:
        mean = tuple(float(v) for v in opts.mean)
    if opts.std is not None:
        std = tuple(float(v) for v in opts.std)
    if opts.scale is not None:
        if opts.scale == 0:
            raise InputError("scale must not be 0")
        divisor = 1.0 / float(opts.scale)
    for label, vals in (("mean", mean), ("std", std)):
        if len(vals) not in (1, n_channels):
            raise InputError(f"{label} needs 1 or {n_channels} values, got {len(vals)}")
    if any(s == 0 for s in std):
        raise InputError("std must not contain 0")
    if dtype == "uint8" and (any(mean) or any(s != 1 for s in std) or divisor != 1):
        why.append("(mean/std/scale ignored: a uint8 input takes raw pixels)")
        mean, std, divisor = (0.0,) * n_channels, (1.0,) * n_channels, 1.0
    return mean, std, divisor


def plan(spec: TensorSpec, metadata: Mapping[str, str] | None = None,
         options: PreprocessOptions | None = None, *, image_to_image: bool = False,
         evidence: Evidence | None = None) -> PreprocessPlan:
    """Decide the preprocessing for one input; later sources only fill what earlier left open:
    metadata, the input's shape and dtype, the user, the model's evidence, a default."""
    opts = options or PreprocessOptions()
    meta = metadata or {}
    why: list[str] = []
    dtype = _check_image_spec(spec)
    axes = _decide_layout(spec, opts, evidence, why)
    preset, decided_by = _decide_preset(dtype, meta, opts, evidence, axes.n_ch, image_to_image,
                                        why)
    channels, n_channels = _decide_channels(meta, opts, axes.n_ch, PRESETS[preset], why)
    size, resize = _decide_geometry(spec, axes, opts, evidence, why)
    mean, std, divisor = _decide_values(dtype, PRESETS[preset], n_channels, opts, why)
    layout = "nchw" if axes.ch_axis == axes.lead else "nhwc"
    guessed = decided_by == "default" or (decided_by == "evidence" and evidence is not None
                                          and not evidence.strong)
    alternatives = evidence.alternatives if evidence is not None and guessed else ()
    return PreprocessPlan(spec.name, preset, channels, layout, size, resize, mean, std,
                          divisor, dtype, axes.rank, n_channels, why, alternatives)


def luminance(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601-2 luma as Pillow computes it (L = R*299/1000 + G*587/1000 + B*114/1000)."""
    return np.asarray(Image.fromarray(rgb).convert("L"))


def normalise(pixels: np.ndarray, p: PreprocessPlan) -> np.ndarray:
    """uint8 (H, W, C) -> float values per channel: (x / divisor - mean) / std, via a table."""
    x = np.arange(256, dtype=np.float64)
    n = pixels.shape[2]
    mean = p.mean if len(p.mean) == n else p.mean * n
    std = p.std if len(p.std) == n else p.std * n
    out = np.empty(pixels.shape, dtype=np.dtype(p.dtype))
    for c in range(n):
        table = ((x / p.divisor - mean[c]) / std[c]).astype(p.dtype)
        out[..., c] = table[pixels[..., c]]
    return out


def apply(p: PreprocessPlan, rgb: np.ndarray) -> Preprocessed:
    """Carry out a plan on an RGB uint8 image."""
    resized = resize_image(rgb, p.size, p.resize)
    if p.channels == "gray":
        pixels = np.repeat(luminance(resized)[:, :, None], p.n_channels, axis=2)
        preview = pixels[:, :, 0]
    elif p.channels == "bgr":
        pixels = resized[:, :, ::-1]
        preview = resized
    else:
        pixels = resized
        preview = resized
    values = normalise(np.ascontiguousarray(pixels), p)  # (H, W, C)
    if p.layout == "nchw":
        values = values.transpose(2, 0, 1)
    tensor = np.ascontiguousarray(values[None] if p.rank == 4 else values)
    geometry = geometry_of(rgb.shape[0], rgb.shape[1], p.size, p.resize)
    return Preprocessed(tensor, p, np.ascontiguousarray(preview), resized, geometry, rgb)


def preprocess(rgb: np.ndarray, spec: TensorSpec, metadata: Mapping[str, str] | None = None,
               options: PreprocessOptions | None = None, *, image_to_image: bool = False,
               evidence: Evidence | None = None) -> Preprocessed:
    return apply(plan(spec, metadata, options, image_to_image=image_to_image,
                      evidence=evidence), rgb)

