"""Answers drawn on the original image (boxes with labels, class masks as a coloured overlay),
Qt-free so `run --save-outputs` and the panel show the same picture."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from onnxstudio.runner.detect import Detection, Segmentation
from onnxstudio.runner.pipeline import RunOutcome

# Distinct colours (Tableau 10), cycled by class index.
PALETTE = [(78, 121, 167), (242, 142, 43), (225, 87, 89), (118, 183, 178), (89, 161, 79),
           (237, 201, 72), (176, 122, 161), (255, 157, 167), (156, 117, 95), (186, 176, 172)]
MASK_ALPHA = 0.45


def colour(index: int) -> tuple[int, int, int]:
    return PALETTE[index % len(PALETTE)]


def draw_detections(rgb: np.ndarray, found: list[Detection]) -> np.ndarray:
    """The image with one labelled rectangle per detection (line width follows image size)."""
    img = Image.fromarray(rgb).convert("RGB")
    pen = max(2, round(min(img.size) / 200))
    draw = ImageDraw.Draw(img)
    font = _font(max(12, round(min(img.size) / 28)))
    for d in found:
        c = colour(d.index)
        x1, y1, x2, y2 = d.box
        draw.rectangle((x1, y1, x2, y2), outline=c, width=pen)
        text = f"{d.label} {d.score:.2f}"
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        tw, th = right - left + 6, bottom - top + 4
        ty = y1 - th if y1 - th >= 0 else y1
        draw.rectangle((x1, ty, x1 + tw, ty + th), fill=c)
        draw.text((x1 + 3, ty + 2 - top), text, fill=(255, 255, 255), font=font)
    return np.asarray(img)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at a size that stays readable when the image is scaled down."""
    try:
        return ImageFont.load_default(size=size)
    except (OSError, TypeError, ValueError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def draw_mask(rgb: np.ndarray, seg: Segmentation, background: int = 0) -> np.ndarray:
    """Classes other than ``background`` tinted in their colour over the image."""
    out = rgb.astype(np.float32).copy()
    for index, _, _ in seg.areas:
        if index == background and len(seg.labels) > 1:
            continue
        sel = seg.classes == index
        out[sel] = out[sel] * (1 - MASK_ALPHA) + np.array(colour(index)) * MASK_ALPHA
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "output"


def save_outputs(outcome: RunOutcome, folder: str | Path) -> list[Path]:
    """Image outputs, the detections overlay and the mask overlay of one outcome as PNGs,
    named after the input (``cat.boxes.png``, ``cat.detections.png``, ...)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    stem = _safe(Path(outcome.source).stem)
    pictures: list[tuple[str, np.ndarray]] = [
        (_safe(v.name), v.image) for v in outcome.views if v.image is not None]
    pre = outcome.preprocessed
    if pre is not None and pre.original is not None:
        if outcome.detections is not None:
            pictures.append(("detections", draw_detections(pre.original,
                                                           outcome.detections.above())))
        if outcome.segmentation is not None:
            pictures.append(("mask", draw_mask(pre.original, outcome.segmentation)))
    written = []
    for suffix, pixels in pictures:
        path = out / f"{stem}.{suffix}.png"
        Image.fromarray(pixels).save(path, format="PNG")
        written.append(path)
    return written
